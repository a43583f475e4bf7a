package ledgersim_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"testing"
	"time"

	"github.com/signerkit/signerkit/internal/tm2"
	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/ledger/ledgersim"
	"github.com/signerkit/signerkit/signer"
)

// TestAccountedDeadline: in accounted mode a sign whose modeled time
// (526 ms on a Nano S Plus) runs past the caller's deadline (300 ms) fails
// with context.DeadlineExceeded, having accounted its modeled time up to
// the deadline; with enough time it signs.
func TestAccountedDeadline(t *testing.T) {
	faces := []struct {
		name string
		dial func(*ledgersim.Device) ledger.Dialer
	}{
		{"apdu", (*ledgersim.Device).Dialer},
		{"hid", (*ledgersim.Device).HIDDialer},
	}
	for _, f := range faces {
		t.Run(f.name, func(t *testing.T) {
			dev := ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Accounted})
			s, err := ledger.Open(context.Background(), ledger.Config{Dial: f.dial(dev)})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			heights := tm2.NewHeights("", 1)

			col := signer.NewCollector()
			ctx, cancel := context.WithTimeout(col.WithContext(context.Background()), 300*time.Millisecond)
			defer cancel()
			_, err = s.SignContext(ctx, heights.Next(tm2.KindPrevote))
			if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, signer.ErrDisconnected) {
				t.Fatalf("sign of 526 modeled ms under 300 ms: %v, want context.DeadlineExceeded, not a disconnect", err)
			}
			sum := col.Summary()
			dev0 := sum.Stage(signer.StageDevice).Modeled
			var total time.Duration
			for _, st := range signer.Stages() {
				total += sum.Stage(st).Modeled
			}
			if dev0 <= 0 || dev0 >= dev.Profile().Sign || total > 300*time.Millisecond {
				t.Errorf("device stage %v of %v, %v modeled in all: want the sign accounted up to the 300 ms deadline", dev0, dev.Profile().Sign, total)
			}

			// With time enough, the next sign succeeds and verifies.
			col = signer.NewCollector()
			ctx, cancel = context.WithTimeout(col.WithContext(context.Background()), time.Minute)
			defer cancel()
			msg := heights.Next(tm2.KindPrevote)
			sig, err := s.SignContext(ctx, msg)
			if err != nil {
				t.Fatal(err)
			}
			if !ed25519.Verify(dev.PublicKey(), msg, sig) {
				t.Fatal("signature does not verify")
			}
			if got := col.Summary().Stage(signer.StageDevice).Modeled; got != dev.Profile().Sign {
				t.Errorf("device stage %v, want %v", got, dev.Profile().Sign)
			}
		})
	}
}

// TestAccountedDeadlineDoesNotWait: an hour-long modeled sign under a
// minute's deadline fails long before the minute is up: nothing sleeps.
func TestAccountedDeadlineDoesNotWait(t *testing.T) {
	slow := ledgersim.NanoSPlus
	slow.Sign = time.Hour
	dev := ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Accounted, Profile: slow})
	s, err := ledger.Open(context.Background(), ledger.Config{Dial: dev.Dialer()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = s.SignContext(ctx, tm2.NewHeights("", 1).Next(tm2.KindPrevote))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
	if ctx.Err() != nil {
		t.Fatal("the sign waited for the deadline")
	}
}
