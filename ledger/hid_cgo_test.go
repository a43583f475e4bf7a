//go:build cgo

package ledger_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/signer"
)

// With no Ledger attached, opening one fails with ErrDeviceNotFound (or
// ErrUnsupported where USB HID is not available), not a hang or a panic.
func TestOpenNoDevice(t *testing.T) {
	if os.Getenv("SIGNERKIT_LEDGER") != "" {
		t.Skip("SIGNERKIT_LEDGER is set: a device may be attached")
	}
	for _, path := range []string{"", "/dev/signerkit-no-such-hidraw"} {
		s, err := ledger.Open(context.Background(), ledger.Config{Path: path})
		if s != nil {
			s.Close()
			t.Fatalf("Open(%q) opened a device", path)
		}
		if !errors.Is(err, signer.ErrDeviceNotFound) && !errors.Is(err, signer.ErrUnsupported) {
			t.Errorf("Open(%q): %v, want ErrDeviceNotFound", path, err)
		}
		checkPrefix(t, "Open", err)
	}
	for _, uri := range []string{"ledger:", "ledger:hid=/dev/signerkit-no-such-hidraw"} {
		s, err := signer.Open(context.Background(), uri)
		if s != nil {
			s.Close()
			t.Fatalf("signer.Open(%s) opened a device", uri)
		}
		if !errors.Is(err, signer.ErrDeviceNotFound) && !errors.Is(err, signer.ErrUnsupported) {
			t.Errorf("signer.Open(%s): %v, want ErrDeviceNotFound", uri, err)
		}
	}
}
