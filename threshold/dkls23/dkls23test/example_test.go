package dkls23test_test

import (
	"crypto/sha256"
	"fmt"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/signerkit/signerkit/threshold/dkls23"
	"github.com/signerkit/signerkit/threshold/dkls23/dkls23test"
)

// A 2-of-3 key made in process; parties 2 and 3 presign and sign.
func Example() {
	_, shares, err := dkls23test.Keygen(2, 3)
	if err != nil {
		fmt.Println(err)
		return
	}
	sent, pre, err := dkls23test.Presign(shares, []int{2, 3})
	if err != nil {
		fmt.Println(err)
		return
	}
	hash := sha256.Sum256([]byte("message"))
	var parts []*dkls23.SignShare
	for _, p := range pre {
		s, _ := p.Sign(hash[:])
		parts = append(parts, s)
	}
	sig, err := dkls23.Combine(shares[0].PublicKey(), hash[:], parts)
	if err != nil {
		fmt.Println(err)
		return
	}
	pub, _ := secp256k1.ParsePubKey(shares[0].PublicKey())
	fmt.Println("verifies:", sig.Verify(hash[:], pub), "party 1 sent nothing:", sent[0] == 0)
	// Output: verifies: true party 1 sent nothing: true
}
