package signertest_test

import (
	"context"
	"fmt"

	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

// Check runs the suite where there is no *testing.T, and says what failed.
// In a backend's own tests, Run does the same as subtests:
//
//	func TestConformance(t *testing.T) {
//		signertest.Run(t, open, signertest.Options{})
//	}
func ExampleCheck() {
	open := func() (signer.Signer, error) { return inprocess.Generate(signer.Ed25519) }
	fmt.Println("in-process Ed25519:", signertest.Check(open, signertest.Options{}))

	// A signer that returns a corrupted signature does not conform.
	broken := func() (signer.Signer, error) {
		s, err := inprocess.Generate(signer.Ed25519)
		return flipper{s}, err
	}
	fmt.Println("a signer that flips a bit conforms:", signertest.Check(broken, signertest.Options{}) == nil)
	// Output:
	// in-process Ed25519: <nil>
	// a signer that flips a bit conforms: false
}

// flipper corrupts the first byte of every signature SignContext makes.
type flipper struct{ *inprocess.Signer }

func (f flipper) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	sig, err := f.Signer.SignContext(ctx, msg)
	if err == nil {
		sig[0] ^= 1
	}
	return sig, err
}
