//go:build cgo

package pkcs11_test

import (
	"context"
	"testing"
	"time"

	"github.com/signerkit/signerkit/pkcs11"
	"github.com/signerkit/signerkit/pkcs11/pkcs11test"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

// TestRealToken runs the conformance suite on a key of a real token, when
// SIGNERKIT_PKCS11_URI names one, e.g.
//
//	SIGNERKIT_PKCS11_URI='pkcs11:token=YubiHSM;object=signerkit-test' \
//	SIGNERKIT_PKCS11_MODULE=/usr/lib/x86_64-linux-gnu/pkcs11/yubihsm_pkcs11.so \
//	SIGNERKIT_PKCS11_PIN=0001password go test -run RealToken ./pkcs11/
//
// The module comes from the URI's module-path or SIGNERKIT_PKCS11_MODULE,
// the PIN from its pin-source or pin-value or SIGNERKIT_PKCS11_PIN.
func TestRealToken(t *testing.T) {
	cfg, ok, err := pkcs11test.RealToken()
	if !ok {
		t.Skip("no real token: set SIGNERKIT_PKCS11_URI (and SIGNERKIT_PKCS11_MODULE, SIGNERKIT_PKCS11_PIN) to run the suite on one")
	}
	if err != nil {
		t.Fatal(err)
	}
	signertest.Run(t, func() (signer.Signer, error) {
		k, err := pkcs11.Open(context.Background(), cfg)
		if err != nil {
			return nil, err // not k: a nil *Signer in the interface is not nil
		}
		return k, nil
	}, signertest.Options{Concurrency: 2, Timeout: 2 * time.Minute})
}
