//go:build !cgo

package ledger_test

import (
	"context"
	"errors"
	"testing"

	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/signer"
)

// A pure-Go build has no USB HID: both HID transports say so.
func TestHIDUnsupportedWithoutCgo(t *testing.T) {
	for name, dial := range map[string]ledger.Dialer{"hid": ledger.HIDDialer(""), "ledger-go": ledger.LedgerGoDialer(0)} {
		if _, err := dial(context.Background()); !errors.Is(err, signer.ErrUnsupported) {
			t.Errorf("%s: %v, want ErrUnsupported", name, err)
		}
	}
}
