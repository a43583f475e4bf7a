//go:build cgo

package pkcs11_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/signerkit/signerkit/pkcs11"
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
	uri := os.Getenv("SIGNERKIT_PKCS11_URI")
	if uri == "" {
		t.Skip("no real token: set SIGNERKIT_PKCS11_URI (and SIGNERKIT_PKCS11_MODULE, SIGNERKIT_PKCS11_PIN) to run the suite on one")
	}
	u, err := pkcs11.ParseURI(uri)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := u.Config()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Module == "" {
		cfg.Module = os.Getenv("SIGNERKIT_PKCS11_MODULE")
	}
	if pin := os.Getenv("SIGNERKIT_PKCS11_PIN"); cfg.PIN == nil && pin != "" {
		cfg.PIN = func() ([]byte, error) { return []byte(pin), nil }
	}
	if cfg.KeyLabel == "" && cfg.KeyID == nil {
		t.Fatal("SIGNERKIT_PKCS11_URI names no key: add object= or id=")
	}
	signertest.Run(t, func() (signer.Signer, error) {
		return pkcs11.OpenKey(context.Background(), cfg)
	}, signertest.Options{Concurrency: 2, Timeout: 2 * time.Minute})
}
