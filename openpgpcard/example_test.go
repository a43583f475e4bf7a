package openpgpcard_test

import (
	"context"
	"crypto/ed25519"
	"fmt"

	"github.com/signerkit/signerkit/openpgpcard"
	"github.com/signerkit/signerkit/openpgpcard/cardsim"
	"github.com/signerkit/signerkit/signer"
)

// Example generates an Ed25519 key on a simulated card and signs with it.
// Against a real card, leave Config.Dial nil to use PC/SC.
func Example() {
	card := cardsim.New(cardsim.Config{Profile: cardsim.FST01})
	ctx := context.Background()
	admin := openpgpcard.Config{Dial: card.Dialer(), AdminPIN: signer.SecretBytes([]byte("12345678"))}
	if _, err := openpgpcard.Generate(ctx, admin, openpgpcard.KeySign, openpgpcard.AttrEd25519); err != nil {
		panic(err)
	}
	s, err := openpgpcard.Open(ctx, openpgpcard.Config{Dial: card.Dialer(), PIN: signer.SecretBytes([]byte("123456"))})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	msg := []byte("hello")
	sig, err := s.SignContext(ctx, msg)
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Attributes(), ed25519.Verify(s.Public().(ed25519.PublicKey), msg, sig))
	// Output: ed25519 true
}

// ExampleImport puts an Ed25519 key made elsewhere on a simulated card and
// signs with it: the signature verifies under the key's own public key.
func ExampleImport() {
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		panic(err)
	}
	card := cardsim.New(cardsim.Config{Profile: cardsim.NitrokeyStart})
	ctx := context.Background()
	admin := openpgpcard.Config{Dial: card.Dialer(), AdminPIN: signer.SecretBytes([]byte("12345678"))}
	if _, err := openpgpcard.Import(ctx, admin, openpgpcard.KeySign, priv); err != nil {
		panic(err)
	}
	s, err := openpgpcard.Open(ctx, openpgpcard.Config{Dial: card.Dialer(), PIN: signer.SecretBytes([]byte("123456"))})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	msg := []byte("hello")
	sig, err := s.SignContext(ctx, msg)
	if err != nil {
		panic(err)
	}
	fmt.Println(ed25519.Verify(pub, msg, sig))
	// Output: true
}
