package ledger_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/ledger/ledgersim"
	"github.com/signerkit/signerkit/signbytes/signbytestest"
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
			heights := signbytestest.NewHeights("", 1)
			msg := heights.Next(signbytestest.KindPrevote)
			mustSign(t, s, msg)
			check("double sign", errorOf(s.SignContext(ctx, msg)), signer.ErrDoubleSign)

			release := dev.Hang()
			hctx, hcancel := context.WithTimeout(ctx, 50*time.Millisecond)
			check("hung device", errorOf(s.SignContext(hctx, heights.Next(signbytestest.KindPrevote))), context.DeadlineExceeded)
			hcancel()
			release()

			dev.Inject(ledgersim.FaultUnplug)
			check("unplugged mid-sign", errorOf(s.SignContext(ctx, heights.Next(signbytestest.KindPrevote))), signer.ErrDisconnected)
			// The APDU and HID faces refuse the dial; the Speculos server
			// still accepts and hangs up.
			err := errorOf(s.SignContext(ctx, heights.Next(signbytestest.KindPrevote)))
			if f.name == "speculos" {
				check("reconnecting while unplugged", err, signer.ErrDisconnected)
			} else {
				check("reconnecting while unplugged", err, signer.ErrDeviceNotFound)
			}
			dev.Replug()
			mustSign(t, s, heights.Next(signbytestest.KindPrevote))
			s.Close()
			check("after Close", errorOf(s.SignContext(ctx, heights.Next(signbytestest.KindPrevote))), signer.ErrClosed)
		})
	}
}

// The client refuses, before sending, what the validator app cannot sign:
// sign bytes over AppMaxMessage (128) bytes (docs/protocols.md A.5).
func TestAppMessageLimit(t *testing.T) {
	ctx := context.Background()
	dev := ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Accounted})
	s, err := ledger.Open(ctx, ledger.Config{Dial: dev.Dialer()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.MaxMessage(); ledger.AppMaxMessage != 128 || got != 128 {
		t.Errorf("MaxMessage() = %d, want 128", got)
	}
	// With signbytestest.Message's block id and timestamp, a proposal at round 1
	// fits on a 6-character chain id, not on 7; a precommit at round 1 on
	// 17 characters, not on 18.
	for _, tc := range []struct {
		kind  signbytestest.Kind
		chain string
		ok    bool
	}{
		{signbytestest.KindProposal, "test11", true},
		{signbytestest.KindProposal, "test111", false},
		{signbytestest.KindPrecommit, "abcdefghijklmnopq", true},
		{signbytestest.KindPrecommit, "abcdefghijklmnopqr", false},
	} {
		msg := signbytestest.Message(tc.kind, int64(dev.Stats().APDUs+10), tc.chain)
		before := dev.Stats().APDUs
		_, err := s.SignContext(ctx, msg)
		sent := dev.Stats().APDUs - before
		var tl *ledger.MessageTooLargeError
		switch {
		case tc.ok && err != nil:
			t.Errorf("%v on %q (%d bytes): %v", tc.kind, tc.chain, len(msg), err)
		case !tc.ok && (!errors.As(err, &tl) || !errors.Is(err, signer.ErrMessageTooLarge) || tl.Size != len(msg) || tl.Limit != 128 || !strings.Contains(err.Error(), "validator app's limit of 128 bytes")):
			t.Errorf("%v on %q (%d bytes): %v, want a *MessageTooLargeError naming the app's 128-byte limit", tc.kind, tc.chain, len(msg), err)
		case !tc.ok && sent != 0:
			t.Errorf("%v on %q: %d APDUs sent for a refused message", tc.kind, tc.chain, sent)
		}
	}
	// Config.MaxMessage sets another limit, or lifts it.
	for _, tc := range []struct{ max, want int }{{64, 64}, {ledger.NoMessageLimit, 255 * 250}, {1 << 20, 255 * 250}} {
		s, err := ledger.Open(ctx, ledger.Config{Dial: ledgersim.MustNew(ledgersim.Config{Raw: true}).Dialer(), MaxMessage: tc.max})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.MaxMessage(); got != tc.want {
			t.Errorf("MaxMessage %d: MaxMessage() = %d, want %d", tc.max, got, tc.want)
		}
		_, err = s.SignContext(ctx, make([]byte, 200))
		if tc.max == 64 && !errors.Is(err, signer.ErrMessageTooLarge) || tc.max != 64 && err != nil {
			t.Errorf("MaxMessage %d, 200 bytes: %v", tc.max, err)
		}
		s.Close()
	}
}
