//go:build cgo

package ledgergo_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/signerkit/signerkit/ledger/ledgergo"
	"github.com/signerkit/signerkit/signer"
)

// With no Ledger attached, the Dialer fails with ErrDeviceNotFound (or
// ErrUnsupported where USB HID is not available), not a hang or a panic.
func TestDialerNoDevice(t *testing.T) {
	if os.Getenv("SIGNERKIT_LEDGER") != "" {
		t.Skip("SIGNERKIT_LEDGER is set: a device may be attached")
	}
	tr, err := ledgergo.Dialer(7)(context.Background())
	if tr != nil {
		tr.Close()
		t.Fatal("Dialer(7) opened a device")
	}
	if !errors.Is(err, signer.ErrDeviceNotFound) && !errors.Is(err, signer.ErrUnsupported) {
		t.Errorf("Dialer(7): %v, want ErrDeviceNotFound", err)
	}
}
