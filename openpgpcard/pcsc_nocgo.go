//go:build !cgo || !linux

package openpgpcard

import "context"

// PCSCDialer returns a Dialer that, in a build without cgo (or outside Linux, whose pcsc-lite is the only
// PC/SC this package binds yet), fails with
// ErrNoPCSC (wrapping signer.ErrUnsupported).
func PCSCDialer(reader string) Dialer {
	return func(context.Context) (Transport, error) { return nil, ErrNoPCSC }
}
