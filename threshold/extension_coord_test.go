package threshold_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/threshold"
	"github.com/signerkit/signerkit/threshold/frost"
	"github.com/signerkit/signerkit/threshold/thresholdtest"
)

// TestExtensionAfterItsPrecommit: CometBFT v0.38 asks for a precommit for
// a block and then its vote extension, which the coordinator asks first
// of the parties that made the precommit's shares, even where the third
// party, never measured, sorts first (as an unmeasured party does). Every
// signature verifies with crypto/ed25519. A height where an attempt failed
// (a retry may rightly go to the third party) is not held to the pair; at
// least 10 of the 20 must be, which a coordinator choosing the extension's
// pair at random passes about once in 59,000 runs ((1/3)^10).
func TestExtensionAfterItsPrecommit(t *testing.T) {
	_, ss := coordinators(t, true)
	bid := signbytes.BlockID{Hash: bytes.Repeat([]byte{7}, 32), PartSetHeader: signbytes.PartSetHeader{Total: 1, Hash: make([]byte, 32)}}
	held := 0
	for h := int64(1); h <= 20; h++ {
		pc, ext := precommitAndExtension(t, bid, h)
		s0 := ss[0].Stats()
		mustSign(t, ss[0], pc)
		s1 := ss[0].Stats()
		mustSign(t, ss[0], ext)
		s2 := ss[0].Stats()
		pcPair, pcClean := sharesBetween(s0, s1)
		extPair, extClean := sharesBetween(s1, s2)
		if !pcClean || !extClean {
			continue
		}
		held++
		if pcPair != extPair {
			t.Errorf("height %d: the precommit's shares came from parties %v, its extension's from %v", h, pcPair, extPair)
		}
	}
	if held < 10 {
		t.Fatalf("only %d of 20 heights signed without a failed attempt", held)
	}
}

// sharesBetween returns the parties whose share counts grew from a to b,
// and whether that was one clean round: two parties, no failure.
func sharesBetween(a, b []threshold.PartyStats) ([2]frost.Identifier, bool) {
	var pair [2]frost.Identifier
	n := 0
	for i := range b {
		if b[i].Failures != a[i].Failures || b[i].Timeouts != a[i].Timeouts || b[i].BadShares != a[i].BadShares {
			return pair, false
		}
		if d := b[i].Shares - a[i].Shares; d == 1 && n < 2 {
			pair[n] = b[i].ID
			n++
		} else if d != 0 {
			return pair, false
		}
	}
	return pair, n == 2
}

// TestExtensionAfterItsPrecommitFirstHeights is the original check: the
// first heights, where no party has been measured yet, sign.
func TestExtensionAfterItsPrecommitFirstHeights(t *testing.T) {
	_, ss := coordinators(t, true)
	bid := signbytes.BlockID{Hash: bytes.Repeat([]byte{7}, 32), PartSetHeader: signbytes.PartSetHeader{Total: 1, Hash: make([]byte, 32)}}
	for h := int64(1); h <= 5; h++ {
		pc, ext := precommitAndExtension(t, bid, h)
		mustSign(t, ss[0], pc)
		mustSign(t, ss[0], ext)
	}
}

// TestExtensionNotHedgedAway: while a party that signed the precommit
// hangs, the extension is still signed: by the hung party once it
// answers, or by a hedge to the third party, which signs an extension at
// or after its last vote though it did not see the precommit.
func TestExtensionNotHedgedAway(t *testing.T) {
	h := newHangSwitch()
	c := startCluster(t, thresholdtest.Options{
		WrapListener: h.wrap,
		Guard: func(frost.Identifier) *guard.Config {
			return &guard.Config{Dir: t.TempDir(), AutoInit: true, ChainIDs: []string{"c1"}}
		},
	})
	cfg := c.Config
	cfg.HedgeAfter = 5 * time.Millisecond
	s := newSigner(t, cfg)
	bid := signbytes.BlockID{Hash: bytes.Repeat([]byte{7}, 32), PartSetHeader: signbytes.PartSetHeader{Total: 1, Hash: make([]byte, 32)}}
	for h0 := int64(1); h0 <= 3; h0++ {
		pc, ext := precommitAndExtension(t, bid, h0)
		before := map[frost.Identifier]uint64{}
		for _, p := range s.Stats() {
			before[p.ID] = p.Shares
		}
		mustSign(t, s, pc)
		var signer frost.Identifier
		for _, p := range s.Stats() {
			if p.Shares > before[p.ID] {
				signer = p.ID
				break
			}
		}
		// One of the precommit's parties hangs for 200 ms, 40 hedge
		// delays.
		h.set(signer, true)
		time.AfterFunc(200*time.Millisecond, func() { h.set(signer, false) })
		mustSign(t, s, ext)
	}
}

// precommitAndExtension returns the sign bytes of a precommit for bid at
// height h on chain c1, and of its vote extension.
func precommitAndExtension(t *testing.T, bid signbytes.BlockID, h int64) (pc, ext []byte) {
	t.Helper()
	pc, err := signbytes.Message{Format: signbytes.CometBFT, Phase: signbytes.Precommit, Height: h, ChainID: "c1", BlockID: bid}.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	ext, err = signbytes.Message{Format: signbytes.CometBFT, Phase: signbytes.VoteExtension, Height: h, ChainID: "c1", Extension: []byte("ext")}.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return pc, ext
}
