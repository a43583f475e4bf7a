package guard

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

const chainID = "test-chain"

func newGuard(t testing.TB, key *signertest.Fake, cfg Config) *Guard {
	t.Helper()
	if cfg.Dir == "" && cfg.FS == nil {
		cfg.Dir = t.TempDir()
	}
	g, err := New(key, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

func TestRules(t *testing.T) {
	for _, f := range []signbytes.Format{signbytes.TM2, signbytes.CometBFT} {
		t.Run(f.String(), func(t *testing.T) {
			ctx := context.Background()
			key := newKey(1)
			g := newGuard(t, key, Config{AutoInit: true})
			sign := func(b []byte) (Signed, error) {
				s, err := g.SignBytes(ctx, b)
				if err == nil {
					key.Verify(t, s.SignBytes, s.Signature)
				}
				return s, err
			}

			prop := msg(t, f, chainID, signbytes.Proposal, 5, 0, 0xaa, baseTime)
			s, err := sign(prop)
			if err != nil || s.Cached || !bytes.Equal(s.SignBytes, prop) {
				t.Fatalf("proposal: %+v, %v", s, err)
			}
			prevote := msg(t, f, chainID, signbytes.Prevote, 5, 0, 0xaa, baseTime)
			if _, err := sign(prevote); err != nil {
				t.Fatal(err)
			}
			// Step regression: the proposal again, even identical, is
			// below the state now.
			_, err = sign(prop)
			var dse *DoubleSignError
			if !errors.As(err, &dse) || dse.Reason != "step regression" || !errors.Is(err, signer.ErrDoubleSign) {
				t.Fatalf("step regression: %v", err)
			}
			// Same HRS, same bytes: cached, no backend sign.
			n := key.Signs()
			s, err = sign(prevote)
			if err != nil || !s.Cached || s.TimestampChanged || key.Signs() != n {
				t.Fatalf("identical: %+v, %v (signs %d→%d)", s, err, n, key.Signs())
			}
			// Same HRS, only the timestamp differs: cached with the old
			// timestamp, which rebuilds the signed bytes.
			later := msg(t, f, chainID, signbytes.Prevote, 5, 0, 0xaa, baseTime.Add(3*time.Second))
			s, err = sign(later)
			if err != nil || !s.Cached || !s.TimestampChanged || !s.Timestamp.Equal(baseTime) || !bytes.Equal(s.SignBytes, prevote) || key.Signs() != n {
				t.Fatalf("timestamp only: %+v, %v", s, err)
			}
			lm, _ := signbytes.ParseFormat(later, f)
			rebuilt, err := lm.WithTimestamp(s.Timestamp)
			if err != nil || !bytes.Equal(rebuilt, prevote) {
				t.Fatalf("rebuilt %x, %v", rebuilt, err)
			}
			_, err = g.SignContext(ctx, later)
			var tse *TimestampError
			if !errors.As(err, &tse) || !tse.Timestamp.Equal(baseTime) || !errors.Is(err, signer.ErrDoubleSign) {
				t.Fatalf("SignContext timestamp only: %v", err)
			}
			// Same HRS, another block or nil: conflicting.
			for _, other := range [][]byte{
				msg(t, f, chainID, signbytes.Prevote, 5, 0, 0xbb, baseTime),
				msg(t, f, chainID, signbytes.Prevote, 5, 0, 0, baseTime),
				msg(t, f, chainID, signbytes.Prevote, 5, 0, 0, baseTime.Add(time.Second)),
			} {
				_, err = sign(other)
				if !errors.As(err, &dse) || dse.Reason != "conflicting data at the same height/round/step" {
					t.Fatalf("conflict: %v", err)
				}
			}
			// Precommit, then higher round, then round regression.
			if _, err := sign(msg(t, f, chainID, signbytes.Precommit, 5, 0, 0, baseTime)); err != nil {
				t.Fatal(err)
			}
			if _, err := sign(msg(t, f, chainID, signbytes.Prevote, 5, 2, 0xcc, baseTime)); err != nil {
				t.Fatal(err)
			}
			_, err = sign(msg(t, f, chainID, signbytes.Precommit, 5, 1, 0xcc, baseTime))
			if !errors.As(err, &dse) || dse.Reason != "round regression" {
				t.Fatalf("round regression: %v", err)
			}
			if _, err := sign(msg(t, f, chainID, signbytes.Prevote, 6, 0, 0xdd, baseTime)); err != nil {
				t.Fatal(err)
			}
			_, err = sign(msg(t, f, chainID, signbytes.Precommit, 5, 9, 0xdd, baseTime))
			if !errors.As(err, &dse) || dse.Reason != "height regression" || dse.LastHeight != 6 || dse.Height != 5 {
				t.Fatalf("height regression: %v", err)
			}
			// Another chain has its own state.
			if _, err := sign(msg(t, f, "other", signbytes.Prevote, 1, 0, 0xdd, baseTime)); err != nil {
				t.Fatal(err)
			}
			st := g.Stats()
			if st.Signs != uint64(key.Signs()) || st.Syncs != st.Signs || st.Cached != 3 || st.Refused != 6 {
				t.Fatalf("stats %+v, backend signs %d", st, key.Signs())
			}
		})
	}
}

func TestVoteExtension(t *testing.T) {
	ctx := context.Background()
	key := newKey(2)
	g := newGuard(t, key, Config{AutoInit: true})
	f := signbytes.CometBFT
	ext := msg(t, f, chainID, signbytes.VoteExtension, 3, 1, 0x42, time.Time{})
	_, err := g.SignBytes(ctx, ext)
	mustErr(t, err, signer.ErrDoubleSign) // no precommit yet
	if _, err := g.SignBytes(ctx, msg(t, f, chainID, signbytes.Precommit, 3, 1, 0xaa, baseTime)); err != nil {
		t.Fatal(err)
	}
	syncs := g.Stats().Syncs
	for range 2 {
		s, err := g.SignBytes(ctx, ext)
		if err != nil {
			t.Fatal(err)
		}
		key.Verify(t, ext, s.Signature)
	}
	if g.Stats().Syncs != syncs {
		t.Fatal("a vote extension synced the state")
	}
	_, err = g.SignBytes(ctx, msg(t, f, chainID, signbytes.VoteExtension, 3, 0, 0x42, time.Time{}))
	mustErr(t, err, signer.ErrDoubleSign)
	// Not after a nil precommit.
	if _, err := g.SignBytes(ctx, msg(t, f, chainID, signbytes.Precommit, 4, 0, 0, baseTime)); err != nil {
		t.Fatal(err)
	}
	_, err = g.SignBytes(ctx, msg(t, f, chainID, signbytes.VoteExtension, 4, 0, 0x42, time.Time{}))
	mustErr(t, err, signer.ErrDoubleSign)
}

func TestInvalidMessages(t *testing.T) {
	ctx := context.Background()
	key := newKey(3)
	g := newGuard(t, key, Config{AutoInit: true, Formats: signbytes.TM2})
	for name, b := range map[string][]byte{
		"garbage":       []byte("hello"),
		"empty":         nil,
		"height 0":      msg(t, signbytes.TM2, chainID, signbytes.Prevote, 0, 0, 1, baseTime),
		"negative":      msg(t, signbytes.TM2, chainID, signbytes.Prevote, 1, -1, 1, baseTime),
		"no chain":      msg(t, signbytes.TM2, "", signbytes.Prevote, 1, 0, 1, baseTime),
		"long chain":    msg(t, signbytes.TM2, string(bytes.Repeat([]byte{'c'}, MaxChainIDLen+1)), signbytes.Prevote, 1, 0, 1, baseTime),
		"cometbft only": msg(t, signbytes.CometBFT, chainID, signbytes.Prevote, 1, 0, 0, time.Unix(0, 0)),
	} {
		if _, err := g.SignBytes(ctx, b); !errors.Is(err, signer.ErrInvalidMessage) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if key.Signs() != 0 {
		t.Fatal("the backend signed an invalid message")
	}
	if _, err := g.Sign(nil, []byte("x"), crypto.SHA256); !errors.Is(err, signer.ErrUnsupported) {
		t.Fatalf("digest: %v", err)
	}
	if _, err := g.Sign(nil, []byte("x"), &ed25519.Options{Context: "c"}); !errors.Is(err, signer.ErrUnsupported) {
		t.Fatalf("ed25519ctx: %v", err)
	}
	sig, err := g.Sign(nil, msg(t, signbytes.TM2, chainID, signbytes.Prevote, 1, 0, 1, baseTime), crypto.Hash(0))
	if err != nil || len(sig) != ed25519.SignatureSize {
		t.Fatalf("Sign: %x, %v", sig, err)
	}
	if g.Public().(ed25519.PublicKey).Equal(key.Public()) == false || g.Unwrap() != signer.Signer(key) {
		t.Fatal("Public/Unwrap")
	}
	if a, err := signer.AlgorithmOf(g); err != nil || a != signer.Ed25519 {
		t.Fatalf("AlgorithmOf = %v, %v", a, err)
	}
}

func TestPersistence(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	key := newKey(4)
	g := newGuard(t, key, Config{Dir: dir, AutoInit: true})
	pc := msg(t, signbytes.TM2, chainID, signbytes.Precommit, 10, 2, 0xaa, baseTime)
	first, err := g.SignBytes(ctx, pc)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if !key.Closed() {
		t.Fatal("Close did not close the signer")
	}
	if _, err := g.SignBytes(ctx, pc); !errors.Is(err, signer.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}

	key2 := newKey(4)
	g2 := newGuard(t, key2, Config{Dir: dir}) // no AutoInit: the file exists
	st, err := g2.State(ctx, chainID)
	if err != nil || st.Height != 10 || st.Round != 2 || st.Step != 3 || !bytes.Equal(st.Signature, first.Signature) {
		t.Fatalf("state after restart: %+v, %v", st, err)
	}
	s, err := g2.SignBytes(ctx, msg(t, signbytes.TM2, chainID, signbytes.Precommit, 10, 2, 0xaa, baseTime.Add(time.Minute)))
	if err != nil || !s.TimestampChanged || !bytes.Equal(s.Signature, first.Signature) || key2.Signs() != 0 {
		t.Fatalf("after restart: %+v, %v", s, err)
	}
	_, err = g2.SignBytes(ctx, msg(t, signbytes.TM2, chainID, signbytes.Prevote, 10, 2, 0xaa, baseTime))
	mustErr(t, err, signer.ErrDoubleSign)
	// Many signs alternate the slots; the state follows.
	for h := int64(11); h < 20; h++ {
		if _, err := g2.SignBytes(ctx, msg(t, signbytes.TM2, chainID, signbytes.Prevote, h, 0, 0xaa, baseTime)); err != nil {
			t.Fatal(err)
		}
	}
	g2.Close()
	g3 := newGuard(t, newKey(4), Config{Dir: dir})
	if st, err := g3.State(ctx, chainID); err != nil || st.Height != 19 || st.Step != 2 {
		t.Fatalf("state: %+v, %v", st, err)
	}
}

func TestInit(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	key := newKey(5)
	g := newGuard(t, key, Config{Dir: dir})
	_, err := g.SignBytes(ctx, msg(t, signbytes.TM2, chainID, signbytes.Prevote, 1, 0, 1, baseTime))
	mustErr(t, err, ErrNoState)
	if _, err := g.State(ctx, chainID); !errors.Is(err, ErrNoState) {
		t.Fatal(err)
	}
	if err := g.Init(ctx, chainID, 100); err != nil {
		t.Fatal(err)
	}
	if err := g.Init(ctx, chainID, 100); err != nil {
		t.Fatalf("Init again at the same height: %v", err)
	}
	_, err = g.SignBytes(ctx, msg(t, signbytes.TM2, chainID, signbytes.Precommit, 99, 5, 1, baseTime))
	mustErr(t, err, signer.ErrDoubleSign)
	// Below an initialised state, the error says so, not that 100 was signed.
	var dse *DoubleSignError
	if !errors.As(err, &dse) || !dse.NeverSigned || !strings.Contains(err.Error(), "below height 100, where the state was initialised") ||
		strings.Contains(err.Error(), "last signed") {
		t.Fatalf("below the initial height: %v", err)
	}
	// Opened again, the state read from the file says the same.
	dir2 := t.TempDir()
	g2 := newGuard(t, newKey(5), Config{Dir: dir2})
	if err := g2.Init(ctx, chainID, 100); err != nil {
		t.Fatal(err)
	}
	g2.Close()
	g2 = newGuard(t, newKey(5), Config{Dir: dir2})
	_, err = g2.SignBytes(ctx, msg(t, signbytes.TM2, chainID, signbytes.Precommit, 99, 5, 1, baseTime))
	if !errors.As(err, &dse) || !dse.NeverSigned {
		t.Fatalf("below the initial height, read from the file: %v", err)
	}
	g2.Close()
	if _, err := g.SignBytes(ctx, msg(t, signbytes.TM2, chainID, signbytes.Proposal, 100, 0, 1, baseTime)); err != nil {
		t.Fatal(err)
	}
	_, err = g.SignBytes(ctx, msg(t, signbytes.TM2, chainID, signbytes.Precommit, 99, 0, 1, baseTime))
	if !errors.As(err, &dse) || dse.NeverSigned || !strings.Contains(err.Error(), "height regression") || !strings.Contains(err.Error(), "last signed 100/0/1") {
		t.Fatalf("below a signed height: %v", err)
	}
	mustErr(t, g.Init(ctx, chainID, 100), signer.ErrDoubleSign)
	mustErr(t, g.Init(ctx, chainID, 50), signer.ErrDoubleSign)
	if err := g.Init(ctx, chainID, 200); err != nil {
		t.Fatal(err)
	}
	st, _ := g.State(ctx, chainID)
	if st.Height != 200 || st.Step != 0 || st.SignBytes != nil {
		t.Fatalf("after raise: %+v", st)
	}
	mustErr(t, g.Init(ctx, "", 1), signer.ErrInvalidArgument)
	mustErr(t, g.Init(ctx, chainID, -1), signer.ErrInvalidArgument)
	// The file is there, whole, and fsynced into its directory.
	fi, err := os.Stat(filepath.Join(dir, stateFileName(chainID)))
	if err != nil || fi.Size() != fileSize || fi.Mode().Perm() != 0o600 {
		t.Fatalf("state file: %v, %v", fi, err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".*tmp*")); len(m) != 0 {
		t.Fatalf("temporary files left: %v", m)
	}
}

func TestCorrupt(t *testing.T) {
	ctx := context.Background()
	setup := func(t *testing.T) (string, string, []byte) {
		dir := t.TempDir()
		g := newGuard(t, newKey(6), Config{Dir: dir, AutoInit: true})
		for h := int64(1); h <= 3; h++ {
			if _, err := g.SignBytes(ctx, msg(t, signbytes.TM2, chainID, signbytes.Prevote, h, 0, 1, baseTime)); err != nil {
				t.Fatal(err)
			}
		}
		g.Close()
		path := filepath.Join(dir, stateFileName(chainID))
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return dir, path, b
	}
	for name, damage := range map[string]func([]byte) []byte{
		"empty":          func(b []byte) []byte { return nil },
		"truncated":      func(b []byte) []byte { return b[:slotSize+100] },
		"one slot":       func(b []byte) []byte { return b[:slotSize] },
		"longer":         func(b []byte) []byte { return append(b, 0) },
		"both flipped":   func(b []byte) []byte { b[100] ^= 1; b[slotSize+100] ^= 1; return b },
		"zeros":          func(b []byte) []byte { return make([]byte, fileSize) },
		"same seq":       func(b []byte) []byte { copy(b[slotSize:], b[:slotSize]); return b },
		"not ours":       func(b []byte) []byte { return bytes.Repeat([]byte("{json}\n"), fileSize/7+1)[:fileSize] },
		"newer is lower": func(b []byte) []byte { return swapSeq(b) },
	} {
		t.Run(name, func(t *testing.T) {
			dir, path, b := setup(t)
			bad := damage(bytes.Clone(b))
			if err := os.WriteFile(path, bad, 0o600); err != nil {
				t.Fatal(err)
			}
			key := newKey(6)
			g := newGuard(t, key, Config{Dir: dir, AutoInit: true})
			_, err := g.SignBytes(ctx, msg(t, signbytes.TM2, chainID, signbytes.Prevote, 4, 0, 1, baseTime))
			var ce *CorruptError
			if !errors.As(err, &ce) || !errors.Is(err, signer.ErrCorrupt) {
				t.Fatalf("sign on a damaged file: %v", err)
			}
			mustErr(t, g.Init(ctx, chainID, 1000), signer.ErrCorrupt)
			if key.Signs() != 0 {
				t.Fatal("signed on a damaged file")
			}
			after, _ := os.ReadFile(path)
			if !bytes.Equal(after, bad) {
				t.Fatal("the damaged file was changed")
			}
		})
	}
	// One damaged slot next to a whole one is refused too, whichever slot
	// it is: the damaged one may have held the newest state, and the
	// other one is older.
	for _, slot := range []int{0, 1} {
		dir, path, b := setup(t)
		b[slot*slotSize+50] ^= 0x80
		os.WriteFile(path, b, 0o600)
		key := newKey(6)
		g := newGuard(t, key, Config{Dir: dir})
		_, err := g.State(ctx, chainID)
		var ce *CorruptError
		if !errors.As(err, &ce) || len(ce.Slots) != 1 || ce.Slots[0] != slot || !errors.Is(err, signer.ErrCorrupt) {
			t.Fatalf("damaged slot %d: %v", slot, err)
		}
		_, err = g.SignBytes(ctx, msg(t, signbytes.TM2, chainID, signbytes.Prevote, 2, 0, 0x42, baseTime))
		if !errors.As(err, &ce) || key.Signs() != 0 {
			t.Fatalf("sign with slot %d damaged: %v (%d signs)", slot, err, key.Signs())
		}
		if after, _ := os.ReadFile(path); !bytes.Equal(after, b) {
			t.Fatalf("slot %d damaged: the file was written", slot)
		}
	}
}

// swapSeq gives the older slot the higher sequence number.
func swapSeq(b []byte) []byte {
	r0, _ := decodeSlot(b[:slotSize], chainID)
	r1, _ := decodeSlot(b[slotSize:], chainID)
	r0.Seq, r1.Seq = r1.Seq, r0.Seq
	return append(r0.encode(), r1.encode()...)
}

func TestStorageFailures(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		set      func(*faultFS)
		errno    error
		readback int64 // the height the file holds afterwards; -1: refused
	}{
		{"ENOSPC on write", func(f *faultFS) { f.writeErr = syscall.ENOSPC }, syscall.ENOSPC, 1},
		{"torn write", func(f *faultFS) { f.writeErr, f.tornBytes = syscall.EIO, slotSize/2 }, syscall.EIO, -1},
		{"EIO on sync", func(f *faultFS) { f.syncErr = syscall.EIO }, syscall.EIO, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			fsys := &faultFS{FS: DirFS(dir)}
			key := newKey(7)
			g := newGuard(t, key, Config{FS: fsys, Dir: dir, AutoInit: true})
			if _, err := g.SignBytes(ctx, msg(t, signbytes.TM2, chainID, signbytes.Prevote, 1, 0, 1, baseTime)); err != nil {
				t.Fatal(err)
			}
			tc.set(fsys)
			s, err := g.SignBytes(ctx, msg(t, signbytes.TM2, chainID, signbytes.Prevote, 2, 0, 1, baseTime))
			var se *StorageError
			if !errors.As(err, &se) || !errors.Is(err, tc.errno) || s.Signature != nil {
				t.Fatalf("got %+v, %v; want no signature and a StorageError wrapping %v", s, err, tc.errno)
			}
			// The chain stays failed, even for what it could serve.
			for _, b := range [][]byte{
				msg(t, signbytes.TM2, chainID, signbytes.Prevote, 1, 0, 1, baseTime),
				msg(t, signbytes.TM2, chainID, signbytes.Prevote, 3, 0, 1, baseTime),
			} {
				if s, err := g.SignBytes(ctx, b); !errors.As(err, &se) || s.Signature != nil {
					t.Fatalf("after the failure: %+v, %v", s, err)
				}
			}
			g.Close()
			g2 := newGuard(t, newKey(7), Config{Dir: dir})
			st, err := g2.State(ctx, chainID)
			if tc.readback < 0 {
				// A torn slot is refused on reopening: it cannot be told
				// from a newer state damaged after its release.
				var ce *CorruptError
				if !errors.As(err, &ce) || len(ce.Slots) != 1 {
					t.Fatalf("reopened after a torn write: %+v, %v", st, err)
				}
				return
			}
			// Reopened, the file holds a whole state.
			if err != nil || st.Height != tc.readback {
				t.Fatalf("reopened: %+v, %v", st, err)
			}
			if _, err := g2.SignBytes(ctx, msg(t, signbytes.TM2, chainID, signbytes.Prevote, 3, 0, 1, baseTime)); err != nil {
				t.Fatal(err)
			}
		})
	}
	// A failed create leaves no state and no signature.
	dir := t.TempDir()
	fsys := &faultFS{FS: DirFS(dir), createErr: syscall.ENOSPC}
	g := newGuard(t, newKey(7), Config{FS: fsys, Dir: dir, AutoInit: true})
	if _, err := g.SignBytes(ctx, msg(t, signbytes.TM2, chainID, signbytes.Prevote, 1, 0, 1, baseTime)); !errors.Is(err, syscall.ENOSPC) {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*")); len(m) != 0 {
		t.Fatalf("files left: %v", m)
	}
}

// Three sentries send the same height/round/step at once: each gets the
// same signature and the backend signs once.
func TestSentries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	key := newKey(8)
	key.SetDelay(50 * time.Microsecond) // widen the race
	g := newGuard(t, key, Config{AutoInit: true})
	heights := 200
	if testing.Short() {
		heights = 50
	}
	const sentries = 3
	steps := []signbytes.Phase{signbytes.Proposal, signbytes.Prevote, signbytes.Precommit}
	hrs := 0
	for h := 1; h <= heights; h++ {
		for _, p := range steps {
			b := msg(t, signbytes.CometBFT, chainID, p, int64(h), 0, byte(h), baseTime)
			var wg sync.WaitGroup
			sigs := make([][]byte, sentries)
			errs := make([]error, sentries)
			start := make(chan struct{})
			for i := range sentries {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					sigs[i], errs[i] = g.SignContext(ctx, b)
				}()
			}
			close(start)
			wg.Wait()
			for i := range sentries {
				if errs[i] != nil || !bytes.Equal(sigs[i], sigs[0]) {
					t.Fatalf("%d/%v sentry %d: %x, %v (first %x)", h, p, i, sigs[i], errs[i], sigs[0])
				}
			}
			key.Verify(t, b, sigs[0])
			hrs++
		}
	}
	if n := key.Signs(); n != int64(hrs) {
		t.Fatalf("%d backend signs for %d height/round/steps", n, hrs)
	}
	if st := g.Stats(); st.Cached != uint64(hrs*(sentries-1)) || st.Syncs != uint64(hrs) {
		t.Fatalf("stats %+v", st)
	}
}

// A waiter gives up when its context ends; Close waits for a sign in
// progress.
func TestContextAndClose(t *testing.T) {
	key := newKey(9)
	key.SetDelay(100 * time.Millisecond)
	g := newGuard(t, key, Config{AutoInit: true})
	done := make(chan error)
	go func() {
		_, err := g.SignContext(context.Background(), msg(t, signbytes.TM2, chainID, signbytes.Prevote, 1, 0, 1, baseTime))
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, err := g.SignContext(ctx, msg(t, signbytes.TM2, chainID, signbytes.Prevote, 1, 0, 1, baseTime))
	mustErr(t, err, context.DeadlineExceeded)
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the sign in progress: %v", err)
	}
	mustErr(t, g.Init(context.Background(), chainID, 5), signer.ErrClosed)
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	g2 := newGuard(t, newKey(9), Config{AutoInit: true})
	_, err = g2.SignContext(ctx, msg(t, signbytes.TM2, chainID, signbytes.Prevote, 1, 0, 1, baseTime))
	mustErr(t, err, context.Canceled)
}

// Two Guards (or processes) on one state directory: the second is refused.
func TestExclusive(t *testing.T) {
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skip("flock checked on Linux only")
	}
	ctx := context.Background()
	dir := t.TempDir()
	g1 := newGuard(t, newKey(10), Config{Dir: dir, AutoInit: true})
	if _, err := g1.SignBytes(ctx, msg(t, signbytes.TM2, chainID, signbytes.Prevote, 1, 0, 1, baseTime)); err != nil {
		t.Fatal(err)
	}
	g2 := newGuard(t, newKey(10), Config{Dir: dir, AutoInit: true})
	_, err := g2.SignBytes(ctx, msg(t, signbytes.TM2, chainID, signbytes.Prevote, 2, 0, 1, baseTime))
	mustErr(t, err, syscall.EWOULDBLOCK)
	g1.Close()
	if _, err := g2.SignBytes(ctx, msg(t, signbytes.TM2, chainID, signbytes.Prevote, 2, 0, 1, baseTime)); err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
}

func TestChainIDs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	key := newKey(13)
	g := newGuard(t, key, Config{Dir: dir, AutoInit: true, ChainIDs: []string{chainID}})
	_, err := g.SignBytes(ctx, msg(t, signbytes.TM2, "intruder", signbytes.Prevote, 1, 0, 1, baseTime))
	mustErr(t, err, signer.ErrInvalidMessage)
	if _, err := g.SignBytes(ctx, msg(t, signbytes.TM2, chainID, signbytes.Prevote, 1, 0, 1, baseTime)); err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*")); len(m) != 1 || key.Signs() != 1 {
		t.Fatalf("files %v, signs %d", m, key.Signs())
	}
}

func TestNew(t *testing.T) {
	if _, err := New(nil, Config{Dir: t.TempDir()}); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Fatal(err)
	}
	if _, err := New(newKey(1), Config{}); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Fatal(err)
	}
	if _, err := New(newKey(1), Config{Dir: filepath.Join(t.TempDir(), "missing")}); !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o600)
	if _, err := New(newKey(1), Config{Dir: file}); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Fatal(err)
	}
}

func TestStateFileName(t *testing.T) {
	seen := map[string]string{}
	for _, id := range []string{"test11", "a/b", "a%2Fb", ".hidden", "a.b", "..", "ü", string(bytes.Repeat([]byte{'x'}, 256)), string(bytes.Repeat([]byte{'/'}, 100))} {
		n := stateFileName(id)
		if prev, ok := seen[n]; ok {
			t.Fatalf("%q and %q share %q", prev, id, n)
		}
		seen[n] = id
		if len(n) > 255 || n[0] == '.' || bytes.ContainsAny([]byte(n), "/\x00") {
			t.Fatalf("%q: bad file name %q", id, n)
		}
	}
	if got := stateFileName("test11"); got != "test11.signstate" {
		t.Fatal(got)
	}
	_ = fmt.Sprint()
}
