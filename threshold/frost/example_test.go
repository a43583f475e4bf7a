package frost_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"fmt"

	"github.com/signerkit/signerkit/threshold/frost"
)

// Split an existing Ed25519 key 2-of-3 and sign with participants 1 and 3.
func Example() {
	seed := make([]byte, ed25519.SeedSize)
	rand.Read(seed)
	dealt, err := frost.SplitSeed(seed, 2, 3, rand.Reader)
	if err != nil {
		panic(err)
	}
	p1, p3 := dealt.Shares[0], dealt.Shares[2]

	// Round one, ahead of the message.
	n1, _ := frost.Commit(p1, rand.Reader)
	n3, _ := frost.Commit(p3, rand.Reader)
	list := []frost.SigningCommitments{n1.Commitments(), n3.Commitments()}

	// Round two, once the message is known.
	msg := []byte("precommit at height 42")
	s1, _ := frost.Sign(p1, n1, msg, list)
	s3, _ := frost.Sign(p3, n3, msg, list)
	sig, err := frost.Aggregate(dealt.Public, msg, list, []frost.SignatureShare{s1, s3})
	if err != nil {
		panic(err)
	}
	pub := ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
	fmt.Println(ed25519.Verify(pub, msg, sig))
	// Output: true
}
