package threshold_test

import (
	"bytes"
	"testing"

	"github.com/signerkit/signerkit/signbytes"
)

// TestExtensionAfterItsPrecommit: CometBFT v0.38 asks for a precommit for
// a block and then its vote extension, and a guarded party signs an
// extension only right after the precommit it signed itself. So the
// extension must go to the parties that made the precommit's shares:
// here the third party, never measured, sorts first for the extension
// (as an unmeasured party does) and, asked, refuses it as a double sign.
// Every signature verifies with crypto/ed25519.
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
