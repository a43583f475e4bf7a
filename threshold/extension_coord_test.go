package threshold_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/threshold/frost"
	"github.com/signerkit/signerkit/threshold/thresholdtest"
)

// TestExtensionAfterItsPrecommit: CometBFT v0.38 asks for a precommit for
// a block and then its vote extension, which the coordinator asks first
// of the parties that made the precommit's shares, even where the third
// party, never measured, sorts first (as an unmeasured party does). Every
// signature verifies with crypto/ed25519.
func TestExtensionAfterItsPrecommit(t *testing.T) {
	_, ss := coordinators(t, true)
	bid := signbytes.BlockID{Hash: bytes.Repeat([]byte{7}, 32), PartSetHeader: signbytes.PartSetHeader{Total: 1, Hash: make([]byte, 32)}}
	for h := int64(1); h <= 5; h++ {
		pc, err := signbytes.Message{Format: signbytes.CometBFT, Phase: signbytes.Precommit, Height: h, ChainID: "c1", BlockID: bid}.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		ext, err := signbytes.Message{Format: signbytes.CometBFT, Phase: signbytes.VoteExtension, Height: h, ChainID: "c1", Extension: []byte("ext")}.Bytes()
		if err != nil {
			t.Fatal(err)
		}
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
		pc, err := signbytes.Message{Format: signbytes.CometBFT, Phase: signbytes.Precommit, Height: h0, ChainID: "c1", BlockID: bid}.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		ext, err := signbytes.Message{Format: signbytes.CometBFT, Phase: signbytes.VoteExtension, Height: h0, ChainID: "c1", Extension: []byte("ext")}.Bytes()
		if err != nil {
			t.Fatal(err)
		}
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
