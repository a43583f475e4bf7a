//go:build !cgo

package ledgergo_test

import (
	"context"
	"errors"
	"testing"

	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/ledger/ledgergo"
	"github.com/signerkit/signerkit/signer"
)

// A pure-Go build has no USB HID: the Dialer, and Open through it, say so.
func TestDialerUnsupportedWithoutCgo(t *testing.T) {
	if _, err := ledgergo.Dialer(0)(context.Background()); !errors.Is(err, signer.ErrUnsupported) {
		t.Errorf("Dialer: %v, want ErrUnsupported", err)
	}
	s, err := ledger.Open(context.Background(), ledger.Config{Dial: ledgergo.Dialer(0)})
	if !errors.Is(err, signer.ErrUnsupported) || s != nil {
		t.Errorf("Open: %v, %v; want ErrUnsupported", s, err)
	}
}
