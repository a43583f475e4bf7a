package dkls23_test

import (
	"crypto/rand"
	"crypto/sha256"
	"fmt"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/signerkit/signerkit/threshold/dkls23"
	"github.com/signerkit/signerkit/threshold/dkls23/dkls23test"
)

// Three parties generate a 2-of-3 key (the messages, which a deployment
// sends over mutual TLS, are handed over in memory by dkls23test.Deliver); parties 1 and 3 presign and then
// sign a hash, and the signature verifies under the group's key.
func Example() {
	kg := map[int]*dkls23.Keygen{}
	out := map[int]map[int][]byte{}
	for id := 1; id <= 3; id++ {
		kg[id], _ = dkls23.NewKeygen([]byte("example key"), id, 2, 3, rand.Reader)
		out[id], _ = kg[id].Round1()
	}
	in := dkls23test.Deliver(out)
	for id := 1; id <= 3; id++ {
		out[id], _ = kg[id].Round2(in[id])
	}
	in = dkls23test.Deliver(out)
	shares := map[int]*dkls23.Share{}
	for id := 1; id <= 3; id++ {
		shares[id], _ = kg[id].Finish(in[id])
	}

	signers := []int{1, 3}
	runs := map[int]*dkls23.Presign{}
	out = map[int]map[int][]byte{}
	for _, id := range signers {
		runs[id], out[id], _ = dkls23.NewPresign(shares[id], []byte("presign 1"), signers, rand.Reader)
	}
	in = dkls23test.Deliver(out)
	out = map[int]map[int][]byte{}
	for _, id := range signers {
		out[id], _ = runs[id].Round2(in[id])
	}
	in = dkls23test.Deliver(out)
	hash := sha256.Sum256([]byte("a gno transaction's sign bytes"))
	var parts []*dkls23.SignShare
	for _, id := range signers {
		pre, err := runs[id].Finish(in[id])
		if err != nil {
			fmt.Println(err)
			return
		}
		part, _ := pre.Sign(hash[:])
		parts = append(parts, part)
	}
	sig, err := dkls23.Combine(shares[1].PublicKey(), hash[:], parts)
	if err != nil {
		fmt.Println(err)
		return
	}
	pub, _ := secp256k1.ParsePubKey(shares[2].PublicKey())
	s := sig.S()
	fmt.Println("verifies:", sig.Verify(hash[:], pub), "low S:", !s.IsOverHalfOrder())
	// Output: verifies: true low S: true
}
