//go:build !cgo

package ledger

import (
	"context"
	"fmt"

	"github.com/signerkit/signerkit/signer"
)

// VendorID is Ledger's USB vendor id.
const VendorID = 0x2c97

// HIDDialer needs cgo (github.com/zondax/hid); in this build its Dialer
// returns an error wrapping signer.ErrUnsupported.
func HIDDialer(path string) Dialer {
	return func(context.Context) (Transport, error) {
		return nil, fmt.Errorf("ledger: USB HID needs a cgo build (CGO_ENABLED=1): %w", signer.ErrUnsupported)
	}
}
