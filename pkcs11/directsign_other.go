//go:build cgo && !unix

package pkcs11

import p11 "github.com/miekg/pkcs11"

// directSigner is not built here: signs go through miekg/pkcs11.
type directSigner struct{}

func lookupDirect(string) *directSigner { return nil }

func (d *directSigner) free() {}

func (d *directSigner) sign(p11.SessionHandle, uint, []byte, p11.ObjectHandle, []byte, int) ([]byte, int64, error) {
	panic("pkcs11: no direct signer in this build")
}
