package threshold_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/threshold/frost"
	"github.com/signerkit/signerkit/threshold/thresholdtest"
)

// TestExtensionFromAnotherPair: CometBFT v0.38 asks for a precommit's
// vote extension right after the precommit, and the coordinator may ask
// another pair of parties for it than the pair that signed the precommit
// (here party 1, which signed it, is down by then). The third party, which
// never saw the precommit, gives its share of the extension; an extension
// below a party's last signed height is refused. (A real CometBFT node
// stalled at height 1 before: the party applied the lone key's rule, an
// extension only right after its own precommit.)
func TestExtensionFromAnotherPair(t *testing.T) {
	fss := map[frost.Identifier]*guard.MemFS{1: {}, 2: {}, 3: {}}
	c := startCluster(t, thresholdtest.Options{Guard: func(id frost.Identifier) *guard.Config {
		return &guard.Config{FS: fss[id], AutoInit: true}
	}})
	s := newSigner(t, c.Config)
	bid := signbytes.BlockID{Hash: bytes.Repeat([]byte{1}, 32), PartSetHeader: signbytes.PartSetHeader{Total: 1, Hash: bytes.Repeat([]byte{2}, 32)}}
	msg := func(ph signbytes.Phase, h int64) []byte {
		m := signbytes.Message{Format: signbytes.CometBFT, Phase: ph, Height: h, ChainID: "test-chain"}
		if ph == signbytes.VoteExtension {
			m.Extension = []byte("extension")
		} else {
			m.BlockID, m.Timestamp = bid, time.Unix(1700000000, 0).UTC()
		}
		b, err := m.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	c.Stop(3)
	mustSign(t, s, msg(signbytes.Prevote, 5))
	mustSign(t, s, msg(signbytes.Precommit, 5))
	if err := c.Restart(3); err != nil {
		t.Fatal(err)
	}
	c.Stop(1)
	mustSign(t, s, msg(signbytes.VoteExtension, 5))
	if got := stats(s, 3).Shares; got == 0 {
		t.Fatal("party 3 gave no share")
	}
	mustSign(t, s, msg(signbytes.Prevote, 6))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := s.SignContext(ctx, msg(signbytes.VoteExtension, 5)); !errors.Is(err, signer.ErrDoubleSign) {
		t.Fatalf("an extension below the parties' last height: %v, want ErrDoubleSign", err)
	}
}
