package cggmp21_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"

	"github.com/signerkit/signerkit/interop/cggmp21"
	"github.com/signerkit/signerkit/netshape"
)

// Signers 1 and 2 of the cached test key make a presignature, then sign a
// hash with it online; the low-S signature verifies under decred's
// secp256k1 and the textbook check.
func Example() {
	b, err := os.ReadFile(cggmp21.KeysFile)
	if err != nil {
		fmt.Println(err)
		return
	}
	keys, err := cggmp21.DecodeKeys(b)
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := cggmp21.NewMesh(cggmp21.PlacementOn(netshape.SameZone()))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close()
	ctx := context.Background()
	p, err := m.Presign(ctx, keys, 1, 2)
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := m.NewSigner(keys, 1, 2, []cggmp21.Presignature{p})
	if err != nil {
		fmt.Println(err)
		return
	}
	hash := sha256.Sum256([]byte("a gno transaction's sign bytes"))
	sig, err := s.Sign(ctx, hash)
	if err != nil {
		fmt.Println(err)
		return
	}
	rs, _ := cggmp21.Signature(sig)
	pub, _ := cggmp21.PublicKey(s.Public())
	fmt.Println(len(rs), cggmp21.VerifyDecred(pub, hash[:], rs), cggmp21.VerifyTextbook(pub, hash[:], rs))
	// Output: 64 <nil> <nil>
}
