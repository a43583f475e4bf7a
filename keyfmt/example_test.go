package keyfmt_test

import (
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/signerkit/signerkit/keyfmt"
)

func Example() {
	seed := sha256.Sum256([]byte("example"))
	pub := ed25519.NewKeyFromSeed(seed[:]).Public().(ed25519.PublicKey)

	gpub := keyfmt.GnoPubKey(pub) // for gno's tcp_authorized_keys
	back, err := keyfmt.ParsePublicKey(gpub)
	fmt.Println(err == nil && back.Equal(pub))
	fmt.Println(keyfmt.GnoAddress(pub) == keyfmt.GnoGenesisValidator(pub, 1, "v").Address)

	_, err = keyfmt.ParsePublicKey(keyfmt.GnoAddress(pub))
	fmt.Println(errors.Is(err, keyfmt.ErrFormat))
	// Output:
	// true
	// true
	// true
}
