//go:build !cgo

package pkcs11

import (
	"context"
	"crypto"
	"fmt"
	"io"

	"github.com/signerkit/signerkit/signer"
)

// errNoCgo is what every operation returns in a build without cgo:
// loading a PKCS#11 module takes cgo (github.com/miekg/pkcs11 compiles
// only its constants without it).
var errNoCgo = fmt.Errorf("pkcs11: this build has no cgo, which loading a PKCS#11 module needs: %w", signer.ErrUnsupported)

// Token is an opened PKCS#11 token. In this build (without cgo) no token
// can be opened; see the cgo build's documentation.
type Token struct{}

var (
	_ signer.KeyOpener    = (*Token)(nil)
	_ signer.KeyLister    = (*Token)(nil)
	_ signer.KeyGenerator = (*Token)(nil)
	_ signer.KeyImporter  = (*Token)(nil)
	_ signer.KeyDeleter   = (*Token)(nil)
)

// Open returns an error wrapping signer.ErrUnsupported: this build has no
// cgo.
func Open(context.Context, Config) (*Token, error) { return nil, errNoCgo }

// OpenKey returns an error wrapping signer.ErrUnsupported: this build has
// no cgo.
func OpenKey(context.Context, Config) (*Key, error) { return nil, errNoCgo }

// OpenURI checks uri and returns an error wrapping signer.ErrUnsupported:
// this build has no cgo.
func OpenURI(_ context.Context, uri string, _ PINFunc) (*Key, error) {
	if _, err := ParseURI(uri); err != nil {
		return nil, err
	}
	return nil, errNoCgo
}

// Label returns "".
func (t *Token) Label() string { return "" }

// SlotID returns 0.
func (t *Token) SlotID() uint { return 0 }

// Close does nothing.
func (t *Token) Close() error { return nil }

// ListKeys returns an error wrapping signer.ErrUnsupported.
func (t *Token) ListKeys(context.Context) ([]signer.KeyInfo, error) { return nil, errNoCgo }

// OpenKey returns an error wrapping signer.ErrUnsupported.
func (t *Token) OpenKey(context.Context, signer.KeyRef) (signer.Signer, error) {
	return nil, errNoCgo
}

// Key returns an error wrapping signer.ErrUnsupported.
func (t *Token) Key(context.Context, signer.KeyRef) (*Key, error) { return nil, errNoCgo }

// GenerateKey returns an error wrapping signer.ErrUnsupported.
func (t *Token) GenerateKey(context.Context, signer.Algorithm, string) (signer.KeyInfo, error) {
	return signer.KeyInfo{}, errNoCgo
}

// Generate returns an error wrapping signer.ErrUnsupported.
func (t *Token) Generate(context.Context, KeySpec) (signer.KeyInfo, error) {
	return signer.KeyInfo{}, errNoCgo
}

// ImportKey returns an error wrapping signer.ErrUnsupported.
func (t *Token) ImportKey(context.Context, crypto.PrivateKey, signer.Algorithm, string) (signer.KeyInfo, error) {
	return signer.KeyInfo{}, errNoCgo
}

// DeleteKey returns an error wrapping signer.ErrUnsupported.
func (t *Token) DeleteKey(context.Context, signer.KeyRef) error { return errNoCgo }

// Key is a private key on a PKCS#11 token. In this build (without cgo) no
// Key can be opened.
type Key struct{}

var (
	_ signer.Signer          = (*Key)(nil)
	_ signer.AlgorithmSigner = (*Key)(nil)
)

// Public returns nil.
func (k *Key) Public() crypto.PublicKey { return nil }

// Algorithm returns 0.
func (k *Key) Algorithm() signer.Algorithm { return 0 }

// Info returns the zero KeyInfo.
func (k *Key) Info() signer.KeyInfo { return signer.KeyInfo{} }

// Close does nothing.
func (k *Key) Close() error { return nil }

// Sign returns an error wrapping signer.ErrUnsupported.
func (k *Key) Sign(io.Reader, []byte, crypto.SignerOpts) ([]byte, error) { return nil, errNoCgo }

// SignContext returns an error wrapping signer.ErrUnsupported.
func (k *Key) SignContext(context.Context, []byte) ([]byte, error) { return nil, errNoCgo }
