package ledger_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/ledger/ledgersim"
	"github.com/signerkit/signerkit/signbytes/signbytestest"
	"github.com/signerkit/signerkit/signer"
)

// healthErr runs Health under a deadline and returns its error, checking
// that a hung device's Health waited for the deadline and no more than
// the test needs to go on.
func healthErr(t *testing.T, h signer.HealthChecker, deadline time.Duration) error {
	t.Helper()
	start := time.Now() // before the deadline, which counts from its own clock reading
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	err := h.Health(ctx)
	if errors.Is(err, context.DeadlineExceeded) && time.Since(start) < deadline {
		t.Errorf("Health gave up after %v, before its %v deadline", time.Since(start), deadline)
	}
	return err
}

func TestHealth(t *testing.T) {
	t.Parallel()
	dev := ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Accounted})
	s := openSigner(t, dev.Dialer(), ledger.Config{})
	var h signer.HealthChecker = s
	heights := signbytestest.NewHeights("", 1)
	mustSign(t, s, heights.Next(signbytestest.KindPrevote))

	before := dev.Stats()
	if err := healthErr(t, h, 5*time.Second); err != nil {
		t.Fatalf("Health: %v", err)
	}
	after := dev.Stats()
	if after.APDUs != before.APDUs+1 || after.Signatures != before.Signatures || after.Confirmations != before.Confirmations {
		t.Errorf("Health: %+v then %+v, want one APDU and no signature or confirmation", before, after)
	}
	// The app's double-sign state is as it was: the next height signs.
	mustSign(t, s, heights.Next(signbytestest.KindPrevote))

	for _, c := range []struct {
		name    string
		breakIt func() (fix func())
		want    []error // any of them
	}{
		{"Unplugged", func() func() { dev.Unplug(); return dev.Replug }, []error{signer.ErrDisconnected, signer.ErrDeviceNotFound}},
		{"Locked", func() func() { dev.SetLocked(true); return func() { dev.SetLocked(false) } }, []error{signer.ErrDeviceLocked}},
		{"AppClosed", func() func() { dev.CloseApp(); return dev.OpenApp }, []error{signer.ErrAppNotOpen}},
		{"Hung", func() func() { return dev.Hang() }, []error{context.DeadlineExceeded}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fix := c.breakIt()
			// Twice: the second finds the transport the first dropped
			// (if it did) and dials again.
			for range 2 {
				err := healthErr(t, h, 300*time.Millisecond)
				ok := false
				for _, w := range c.want {
					ok = ok || errors.Is(err, w)
				}
				if !ok {
					t.Fatalf("Health = %v, want an error wrapping one of %v", err, c.want)
				}
			}
			fix()
			if err := healthErr(t, h, 5*time.Second); err != nil {
				t.Fatalf("Health once fixed: %v", err)
			}
			mustSign(t, s, heights.Next(signbytestest.KindPrevote))
		})
	}
	s.Close()
	if err := healthErr(t, h, time.Second); !errors.Is(err, signer.ErrClosed) {
		t.Fatalf("Health after Close = %v, want ErrClosed", err)
	}
}
