package pkcs11test_test

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"log"

	"github.com/signerkit/signerkit/pkcs11"
	"github.com/signerkit/signerkit/pkcs11/pkcs11test"
	"github.com/signerkit/signerkit/signer"
)

// A throwaway SoftHSM2 token outside a test (in a test, New(t) does the
// same and cleans up by itself): a key generated on it through
// pkcs11.OpenStore, then opened from its pkcs11: URI through signer.Open,
// and its signature checked with crypto/ed25519.
func ExampleCreateTemp() {
	tok, remove, err := pkcs11test.CreateTemp("validator")
	if err != nil {
		log.Fatal(err) // SoftHSM2 is not installed, or this build has no cgo
	}
	defer remove()
	ctx := context.Background()

	st, err := pkcs11.OpenStore(ctx, tok.Config())
	if err != nil {
		log.Fatal(err)
	}
	info, err := st.GenerateKey(ctx, signer.Ed25519, "consensus")
	st.Close()
	if err != nil {
		log.Fatal(err)
	}

	// pkcs11:token=validator;object=consensus?module-path=…&pin-value=1234
	s, err := signer.Open(ctx, tok.URI("consensus"))
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	msg := []byte("a vote")
	sig, err := s.SignContext(ctx, msg)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ed25519.Verify(info.Public.(ed25519.PublicKey), msg, sig))
}
