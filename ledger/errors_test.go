package ledger_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/signerkit/signerkit/internal/tm2"
	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/ledger/ledgersim"
	"github.com/signerkit/signerkit/signer"
)

// checkPrefix fails unless err's text starts with "ledger: " and says it
// only once.
func checkPrefix(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error", what)
		return
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "ledger: ") || strings.Count(msg, "ledger: ") != 1 {
		t.Errorf("%s: %q: want one \"ledger: \" prefix", what, msg)
	}
}

// Errors from every layer — Config checks, dialers, transports, the app,
// reconnection, Close — reach the caller with one "ledger: " prefix and
// the sentinel they wrap.
func TestErrorsHaveOnePrefix(t *testing.T) {
	ctx := context.Background()
	errorOf := func(_ any, err error) error { return err }
	check := func(what string, err, want error) {
		t.Helper()
		if !errors.Is(err, want) {
			t.Errorf("%s: %v, want an error wrapping %v", what, err, want)
		}
		checkPrefix(t, what, err)
	}

	dev := ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Accounted})
	check("ChunkSize 251", errorOf(ledger.Open(ctx, ledger.Config{Dial: dev.Dialer(), ChunkSize: 251})), signer.ErrInvalidArgument)
	check("ChunkSize -1", errorOf(ledger.Open(ctx, ledger.Config{Dial: dev.Dialer(), ChunkSize: -1})), signer.ErrInvalidArgument)
	check("Dial and Path", errorOf(ledger.Open(ctx, ledger.Config{Dial: dev.Dialer(), Path: "/dev/hidraw0"})), signer.ErrInvalidArgument)
	done, cancel := context.WithCancel(ctx)
	cancel()
	check("done context", errorOf(ledger.Open(done, ledger.Config{Dial: dev.Dialer()})), context.Canceled)

	unplugged := ledgersim.MustNew(ledgersim.Config{})
	unplugged.Unplug()
	check("unplugged at open", errorOf(ledger.Open(ctx, ledger.Config{Dial: unplugged.HIDDialer()})), signer.ErrDeviceNotFound)
	check("unplugged at OpenStore", errorOf(ledger.OpenStore(ctx, ledger.Config{Dial: unplugged.Dialer()})), signer.ErrDeviceNotFound)
	old := ledgersim.MustNew(ledgersim.Config{Version: ledger.Version{Minor: 4}})
	check("old app", errorOf(ledger.Open(ctx, ledger.Config{Dial: old.Dialer()})), signer.ErrUnsupported)

	for _, f := range faces[:3] { // apdu, hid, speculos
		t.Run(f.name, func(t *testing.T) {
			dev := ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Accounted})
			s := openSigner(t, f.dial(dev, t), ledger.Config{})
			heights := tm2.NewHeights("", 1)
			msg := heights.Next(tm2.KindPrevote)
			mustSign(t, s, msg)
			check("double sign", errorOf(s.SignContext(ctx, msg)), signer.ErrDoubleSign)

			release := dev.Hang()
			hctx, hcancel := context.WithTimeout(ctx, 50*time.Millisecond)
			check("hung device", errorOf(s.SignContext(hctx, heights.Next(tm2.KindPrevote))), context.DeadlineExceeded)
			hcancel()
			release()

			dev.Inject(ledgersim.FaultUnplug)
			check("unplugged mid-sign", errorOf(s.SignContext(ctx, heights.Next(tm2.KindPrevote))), signer.ErrDisconnected)
			// The APDU and HID faces refuse the dial; the Speculos server
			// still accepts and hangs up.
			err := errorOf(s.SignContext(ctx, heights.Next(tm2.KindPrevote)))
			if f.name == "speculos" {
				check("reconnecting while unplugged", err, signer.ErrDisconnected)
			} else {
				check("reconnecting while unplugged", err, signer.ErrDeviceNotFound)
			}
			dev.Replug()
			mustSign(t, s, heights.Next(tm2.KindPrevote))
			s.Close()
			check("after Close", errorOf(s.SignContext(ctx, heights.Next(tm2.KindPrevote))), signer.ErrClosed)
		})
	}
}
