package inprocess_test

import (
	"testing"

	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	for _, alg := range signer.Algorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			t.Parallel()
			key, err := inprocess.Generate(alg) // one key: RSA generation is slow
			if err != nil {
				t.Fatal(err)
			}
			seed := key
			signertest.Run(t, func() (signer.Signer, error) {
				return inprocess.Reopen(seed)
			}, signertest.Options{})
		})
	}
}
