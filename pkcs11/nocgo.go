//go:build !cgo

package pkcs11

import (
	"context"
	"crypto"
	"fmt"
	"io"

	"github.com/signerkit/signerkit/signer"
)

// errNoCgo is what every open returns in a build without cgo: loading a
// PKCS#11 module takes cgo (github.com/miekg/pkcs11 compiles only its
// constants without it).
var errNoCgo = fmt.Errorf("pkcs11: this build has no cgo, which loading a PKCS#11 module needs: %w", signer.ErrUnsupported)

// Store is an opened PKCS#11 token. In this build (without cgo) none can
// be opened: OpenStore returns an error, and the methods of a nil or zero
// Store return errors wrapping signer.ErrUnsupported.
type Store struct{}

var (
	_ signer.KeyOpener    = (*Store)(nil)
	_ signer.KeyLister    = (*Store)(nil)
	_ signer.KeyGenerator = (*Store)(nil)
	_ signer.KeyImporter  = (*Store)(nil)
	_ signer.KeyDeleter   = (*Store)(nil)
)

// OpenStore returns an error wrapping signer.ErrUnsupported: this build
// has no cgo.
func OpenStore(context.Context, Config) (*Store, error) { return nil, errNoCgo }

// Open returns an error wrapping signer.ErrUnsupported: this build has no
// cgo.
func Open(context.Context, Config) (*Signer, error) { return nil, errNoCgo }

// Label returns "".
func (t *Store) Label() string { return "" }

// SlotID returns 0.
func (t *Store) SlotID() uint { return 0 }

// Close does nothing.
func (t *Store) Close() error { return nil }

// ListKeys returns an error wrapping signer.ErrUnsupported.
func (t *Store) ListKeys(context.Context) ([]signer.KeyInfo, error) { return nil, errNoCgo }

// OpenKey returns an error wrapping signer.ErrUnsupported.
func (t *Store) OpenKey(context.Context, signer.KeyRef) (signer.Signer, error) {
	return nil, errNoCgo
}

// GenerateKey returns an error wrapping signer.ErrUnsupported.
func (t *Store) GenerateKey(context.Context, signer.Algorithm, string) (signer.KeyInfo, error) {
	return signer.KeyInfo{}, errNoCgo
}

// Generate returns an error wrapping signer.ErrUnsupported.
func (t *Store) Generate(context.Context, KeySpec) (signer.KeyInfo, error) {
	return signer.KeyInfo{}, errNoCgo
}

// ImportKey returns an error wrapping signer.ErrUnsupported.
func (t *Store) ImportKey(context.Context, crypto.PrivateKey, signer.Algorithm, string) (signer.KeyInfo, error) {
	return signer.KeyInfo{}, errNoCgo
}

// DeleteKey returns an error wrapping signer.ErrUnsupported.
func (t *Store) DeleteKey(context.Context, signer.KeyRef) error { return errNoCgo }

// Signer is a private key on a PKCS#11 token. In this build (without cgo)
// none can be opened: Open returns an error, and a nil or zero Signer
// signs nothing.
type Signer struct{}

var _ signer.AlgorithmSigner = (*Signer)(nil)

// Public returns nil.
func (k *Signer) Public() crypto.PublicKey { return nil }

// Algorithm returns 0.
func (k *Signer) Algorithm() signer.Algorithm { return 0 }

// Info returns the zero KeyInfo.
func (k *Signer) Info() signer.KeyInfo { return signer.KeyInfo{} }

// Close does nothing.
func (k *Signer) Close() error { return nil }

// Sign returns an error wrapping signer.ErrUnsupported.
func (k *Signer) Sign(io.Reader, []byte, crypto.SignerOpts) ([]byte, error) { return nil, errNoCgo }

// SignContext returns an error wrapping signer.ErrUnsupported.
func (k *Signer) SignContext(context.Context, []byte) ([]byte, error) { return nil, errNoCgo }

// Health returns an error wrapping signer.ErrUnsupported: this build has
// no cgo.
func (s *Signer) Health(context.Context) error { return errNoCgo }

// GenerateExportableKey returns an error wrapping signer.ErrUnsupported.
func (t *Store) GenerateExportableKey(context.Context, signer.Algorithm, string) (signer.KeyInfo, error) {
	return signer.KeyInfo{}, errNoCgo
}

// GenerateWrapKey returns an error wrapping signer.ErrUnsupported.
func (t *Store) GenerateWrapKey(context.Context, string) ([]byte, error) { return nil, errNoCgo }

// PutWrapKey returns an error wrapping signer.ErrUnsupported.
func (t *Store) PutWrapKey(context.Context, string, []byte) ([]byte, error) { return nil, errNoCgo }

// ExportWrapped returns an error wrapping signer.ErrUnsupported.
func (t *Store) ExportWrapped(context.Context, signer.KeyRef, signer.KeyRef) ([]byte, error) {
	return nil, errNoCgo
}

// ImportWrapped returns an error wrapping signer.ErrUnsupported.
func (t *Store) ImportWrapped(context.Context, []byte, signer.KeyRef) (signer.KeyInfo, error) {
	return signer.KeyInfo{}, errNoCgo
}
