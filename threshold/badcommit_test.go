package threshold_test

import (
	"context"
	"crypto/ed25519"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/threshold/frost"
	"github.com/signerkit/signerkit/threshold/thresholdtest"
)

// TestBadCommitmentsParty: a party whose nonce commitments, already in the
// coordinator's pool, are not those of the nonces it signs with (here its
// nonce file is rewritten while it is down, each fresh pair's hiding and
// binding nonces swapped, as a party that lied about its commitments
// would sign). Its shares do not verify against the commitments; the
// coordinator names it (stats and log), never returns a signature made
// with it, and signs on with the other two.
//
// Party 3 is stopped while party 2 lies, so that every sign needs party
// 2 (the coordinator would otherwise prefer the two faster parties and
// might never ask it): the signs then fail, none returning a signature,
// until party 2 is caught. Once party 3 is back, signing goes on with
// parties 1 and 3.
func TestBadCommitmentsParty(t *testing.T) {
	dirs := map[frost.Identifier]string{1: t.TempDir(), 2: t.TempDir(), 3: t.TempDir()}
	c := startCluster(t, thresholdtest.Options{NonceFS: func(id frost.Identifier) guard.FS { return guard.DirFS(dirs[id]) }})
	cfg := c.Config
	cfg.HedgeAfter = -1
	cfg.PoolSize = 32
	var log logBuffer
	cfg.Log = slog.New(slog.NewTextHandler(&log, nil))
	s := newSigner(t, cfg)
	mustSign(t, s, []byte("all honest"))
	// Every pair of party 2's pool is in its nonce file when it stops (a
	// loaded machine may still be filling the pool), so every one lies.
	for deadline := time.Now().Add(20 * time.Second); stats(s, 2).Pool < cfg.PoolSize-1; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("party 2's pool did not fill: %+v", stats(s, 2))
		}
	}
	c.Stop(2)
	if n := swapFreshNonces(t, dirs[2]); n == 0 {
		t.Fatal("party 2's nonce file has no fresh pair")
	}
	if err := c.Restart(2); err != nil {
		t.Fatal(err)
	}
	c.Stop(3)
	// The first sign may meet party 2's connection of before its restart
	// (a failure that is not a bad share); a few are allowed.
	for i := 0; i < 5 && stats(s, 2).BadShares == 0; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		msg := []byte(fmt.Sprintf("with a liar %d", i))
		sig, err := s.SignContext(ctx, msg)
		cancel()
		if err == nil {
			t.Fatalf("sign %d returned a signature made with the lying party 2 (verifies: %v)", i, ed25519.Verify(s.Public().(ed25519.PublicKey), msg, sig))
		}
	}
	if st := stats(s, 2); st.BadShares == 0 {
		t.Fatalf("party 2 was never caught: %+v", st)
	}
	if err := c.Restart(3); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		msg := []byte(fmt.Sprintf("after the liar was caught %d", i))
		if i == 0 {
			// Party 3's connection of before its restart may cost a sign.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			sig, err := s.SignContext(ctx, msg)
			cancel()
			if err == nil && ed25519.Verify(s.Public().(ed25519.PublicKey), msg, sig) {
				continue
			}
		}
		mustSign(t, s, msg)
	}
	if st := stats(s, 3); st.Shares == 0 {
		t.Errorf("party 3 made no share: %+v", st)
	}
	if l := log.String(); !strings.Contains(l, `does not verify; avoided for a minute" party=2 `) {
		t.Errorf("the coordinator's log does not name party 2:\n%s", l)
	}
}

// swapFreshNonces rewrites the nonce file in dir (frost's layout: a
// 64-byte header, then 80-byte slots: state, three zeros, generation,
// hiding nonce, binding nonce, four zeros, CRC-32C of bytes 0–75),
// swapping the two nonces of every fresh slot, and returns how many.
func swapFreshNonces(t *testing.T, dir string) int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil || len(files) != 1 {
		t.Fatalf("nonce files in %s: %v %v", dir, files, err)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for off := 64; off+80 <= len(b); off += 80 {
		slot := b[off : off+80]
		if slot[0] != 1 || crc32.Checksum(slot[:76], crc32.MakeTable(crc32.Castagnoli)) != binary.BigEndian.Uint32(slot[76:]) {
			continue
		}
		var d [32]byte
		copy(d[:], slot[8:40])
		copy(slot[8:40], slot[40:72])
		copy(slot[40:72], d[:])
		binary.BigEndian.PutUint32(slot[76:], crc32.Checksum(slot[:76], crc32.MakeTable(crc32.Castagnoli)))
		n++
	}
	if err := os.WriteFile(files[0], b, 0o600); err != nil {
		t.Fatal(err)
	}
	return n
}
