//go:build !cgo

package pkcs11test

import (
	"fmt"

	"github.com/signerkit/signerkit/signer"
)

// cgoBuild reports whether this build can load PKCS#11 modules.
const cgoBuild = false

// Raw is a bare PKCS#11 session; without cgo there is none.
type Raw struct{}

// OpenRaw returns an error wrapping signer.ErrUnsupported: this build has
// no cgo.
func (tok *Token) OpenRaw(string) (*Raw, error) {
	return nil, fmt.Errorf("pkcs11test: built without cgo: %w", signer.ErrUnsupported)
}

// Sign returns an error wrapping signer.ErrUnsupported.
func (r *Raw) Sign([]byte) ([]byte, error) {
	return nil, fmt.Errorf("pkcs11test: built without cgo: %w", signer.ErrUnsupported)
}

// Close does nothing.
func (r *Raw) Close() error { return nil }
