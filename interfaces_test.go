package signerkit_test

import (
	"io"
	"slices"
	"testing"

	"github.com/signerkit/signerkit/bls"
	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/keybase"
	"github.com/signerkit/signerkit/keybase/gnokeyhome"
	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/openpgpcard"
	"github.com/signerkit/signerkit/pkcs11"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/threshold"
	"github.com/signerkit/signerkit/yubihsm"
)

// Every backend's Signer satisfies the same signer interfaces, and every
// Store opens and lists keys and closes; checked here, in one place, at
// compile time.
var (
	_ signer.AlgorithmSigner = (*inprocess.Signer)(nil)
	_ signer.AlgorithmSigner = (*keybase.Signer)(nil)
	_ signer.AlgorithmSigner = (*ledger.Signer)(nil)
	_ signer.AlgorithmSigner = (*yubihsm.Signer)(nil)
	_ signer.AlgorithmSigner = (*pkcs11.Signer)(nil)
	_ signer.AlgorithmSigner = (*bls.Signer)(nil)
	_ signer.AlgorithmSigner = (*gnokeyhome.Signer)(nil)
	_ signer.AlgorithmSigner = (*threshold.Signer)(nil)
	_ signer.AlgorithmSigner = (*openpgpcard.Signer)(nil)

	// The devices that answer a health probe without signing.
	_ signer.HealthChecker = (*ledger.Signer)(nil)
	_ signer.HealthChecker = (*yubihsm.Signer)(nil)
	_ signer.HealthChecker = (*pkcs11.Signer)(nil)
	_ signer.HealthChecker = (*openpgpcard.Signer)(nil)

	_ store = (*inprocess.Store)(nil)
	_ store = (*keybase.Store)(nil)
	_ store = (*ledger.Store)(nil)
	_ store = (*yubihsm.Store)(nil)
	_ store = (*pkcs11.Store)(nil)
	_ store = (*gnokeyhome.Store)(nil)
	_ store = (*openpgpcard.Store)(nil)

	// The stores whose devices can make, take and remove keys.
	_ fullStore = (*inprocess.Store)(nil)
	_ fullStore = (*keybase.Store)(nil)
	_ fullStore = (*yubihsm.Store)(nil)
	_ fullStore = (*pkcs11.Store)(nil)
)

type store interface {
	signer.KeyOpener
	signer.KeyLister
	io.Closer
}

type fullStore interface {
	store
	signer.KeyGenerator
	signer.KeyImporter
	signer.KeyDeleter
}

// TestSchemes checks that importing the backends registers one URI scheme
// each, named after its package.
func TestSchemes(t *testing.T) {
	want := []string{"bls", "gnokeyhome", "inprocess", "keybase", "ledger", "openpgpcard", "pkcs11", "threshold", "yubihsm"}
	got := slices.DeleteFunc(signer.Schemes(), func(s string) bool { return !slices.Contains(want, s) })
	if !slices.Equal(got, want) {
		t.Errorf("registered schemes %v, want %v", signer.Schemes(), want)
	}
}
