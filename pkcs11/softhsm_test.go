//go:build cgo

package pkcs11_test

import (
	"context"
	"testing"

	"github.com/signerkit/signerkit/pkcs11"
	"github.com/signerkit/signerkit/pkcs11/pkcs11test"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

// openToken makes a throwaway SoftHSM2 token and opens it; both go away
// when the test ends.
func openToken(t *testing.T, mutate ...func(*pkcs11.Config)) (*pkcs11test.Token, *pkcs11.Token) {
	t.Helper()
	st := pkcs11test.New(t)
	cfg := st.Config()
	for _, m := range mutate {
		m(&cfg)
	}
	tok, err := pkcs11.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { tok.Close() })
	return st, tok
}

func TestConformance(t *testing.T) {
	for _, alg := range []signer.Algorithm{signer.Ed25519, signer.ECDSAP256, signer.RSAPKCS1v15} {
		t.Run(alg.String(), func(t *testing.T) {
			_, tok := openToken(t)
			ki, err := tok.GenerateKey(context.Background(), alg, "conformance")
			if err != nil {
				t.Fatalf("GenerateKey: %v", err)
			}
			signertest.Run(t, func() (signer.Signer, error) {
				return tok.OpenKey(context.Background(), ki.Ref())
			}, signertest.Options{})
		})
	}
}
