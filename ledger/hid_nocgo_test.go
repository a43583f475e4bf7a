//go:build !cgo

package ledger_test

import (
	"context"
	"errors"
	"testing"

	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/signer"
)

// A pure-Go build has no USB HID: HIDDialer, Open and OpenStore with the
// default dialer, and signer.Open of a ledger: URI over HID all return an
// error wrapping signer.ErrUnsupported, with one "ledger: " prefix.
func TestHIDUnsupportedWithoutCgo(t *testing.T) {
	ctx := context.Background()
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, signer.ErrUnsupported) {
			t.Errorf("%s: %v, want an error wrapping ErrUnsupported", what, err)
		}
		checkPrefix(t, what, err)
	}
	_, err := ledger.HIDDialer("")(ctx)
	check("HIDDialer", err)
	s, err := ledger.Open(ctx, ledger.Config{})
	check("Open", err)
	if s != nil {
		t.Error("Open returned a Signer with its error")
	}
	_, err = ledger.Open(ctx, ledger.Config{Path: "/dev/hidraw0"})
	check("Open with a Path", err)
	_, err = ledger.OpenStore(ctx, ledger.Config{})
	check("OpenStore", err)
	for _, uri := range []string{"ledger:", "ledger:hid=/dev/hidraw0?chunk-size=32"} {
		s, err := signer.Open(ctx, uri)
		check("signer.Open("+uri+")", err)
		if s != nil {
			t.Errorf("signer.Open(%s) returned a Signer with its error", uri)
		}
	}
}
