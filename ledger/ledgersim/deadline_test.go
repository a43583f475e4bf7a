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

// speculosSim serves dev's Speculos face for the test and returns a
// simulator client's dialer for it.
func speculosSim(t *testing.T, dev *ledgersim.Device) ledger.Dialer {
	srv, err := dev.ServeSpeculos()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return ledger.SpeculosSimulatorDialer(srv.Addr())
}

// TestAccountedDeadline: in accounted mode a sign whose modeled time
// (526 ms on a Nano S Plus) runs past the caller's deadline (300 ms) fails
// with context.DeadlineExceeded, having accounted its modeled time up to
// the deadline; with enough time it signs. On the Speculos face the
// deadline goes to the simulator, and the modeled time comes back, in
// signerkit's extension frames (ledger.SpeculosSimulatorDialer).
func TestAccountedDeadline(t *testing.T) {
	faces := []struct {
		name string
		dial func(*testing.T, *ledgersim.Device) ledger.Dialer
	}{
		{"apdu", func(_ *testing.T, d *ledgersim.Device) ledger.Dialer { return d.Dialer() }},
		{"hid", func(_ *testing.T, d *ledgersim.Device) ledger.Dialer { return d.HIDDialer() }},
		{"speculos", speculosSim},
	}
	for _, f := range faces {
		t.Run(f.name, func(t *testing.T) {
			dev := ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Accounted})
			s, err := ledger.Open(context.Background(), ledger.Config{Dial: f.dial(t, dev)})
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
			var de *ledger.DeadlineError
			if f.name == "speculos" && (!errors.As(err, &de) || de.Modeled < dev.Profile().Sign || de.Accounted <= 0 || de.Accounted > 300*time.Millisecond) {
				t.Errorf("Speculos face: %#v, want a *ledger.DeadlineError of the sign's modeled time, accounted up to the deadline", err)
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
	for _, face := range []string{"apdu", "speculos"} {
		t.Run(face, func(t *testing.T) {
			slow := ledgersim.NanoSPlus
			slow.Sign = time.Hour
			dev := ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Accounted, Profile: slow})
			dial := dev.Dialer()
			if face == "speculos" {
				dial = speculosSim(t, dev)
			}
			s, err := ledger.Open(context.Background(), ledger.Config{Dial: dial})
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
		})
	}
}

// TestSpeculosDeadlineShared: modeled time accounted under one context
// on the Speculos face counts against its deadline for the next sign, as
// on the in-process faces: two signs of 526 modeled ms do not both fit in
// 800 ms.
func TestSpeculosDeadlineShared(t *testing.T) {
	dev := ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Accounted})
	s, err := ledger.Open(context.Background(), ledger.Config{Dial: speculosSim(t, dev)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	heights := tm2.NewHeights("", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 800*time.Millisecond)
	defer cancel()
	if _, err := s.SignContext(ctx, heights.Next(tm2.KindPrevote)); err != nil {
		t.Fatalf("first sign: %v", err)
	}
	if _, err := s.SignContext(ctx, heights.Next(tm2.KindPrecommit)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second sign under the same 800 ms: %v, want context.DeadlineExceeded", err)
	}
}

// TestSpeculosStandardClient: a standard Speculos client (SpeculosDialer)
// sends no deadline, so in accounted mode its sign answers at once and
// succeeds whatever the deadline: the Speculos face speaks plain Speculos
// to it.
func TestSpeculosStandardClient(t *testing.T) {
	dev := ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Accounted})
	srv, err := dev.ServeSpeculos()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	s, err := ledger.Open(context.Background(), ledger.Config{Dial: ledger.SpeculosDialer(srv.Addr())})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	col := signer.NewCollector()
	ctx, cancel := context.WithTimeout(col.WithContext(context.Background()), 300*time.Millisecond)
	defer cancel()
	msg := tm2.NewHeights("", 1).Next(tm2.KindPrevote)
	sig, err := s.SignContext(ctx, msg)
	if err != nil || !ed25519.Verify(dev.PublicKey(), msg, sig) {
		t.Fatalf("sign: %v", err)
	}
	if got := col.Summary().Stage(signer.StageDevice).Modeled; got != 0 {
		t.Errorf("a standard client got %v of modeled device time", got)
	}
}

// TestSpeculosRealtime: in realtime mode the Speculos face sleeps the
// modeled time; a simulator client then gets the slept stages in its
// trace, and a deadline shorter than the sign is enforced by the
// connection's deadline (which is the context's), as with a real device.
func TestSpeculosRealtime(t *testing.T) {
	quick := ledgersim.NanoSPlus
	quick.Sign = 20 * time.Millisecond
	dev := ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Realtime, Profile: quick})
	s, err := ledger.Open(context.Background(), ledger.Config{Dial: speculosSim(t, dev)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	heights := tm2.NewHeights("", 1)
	var slept time.Duration
	tr := &signer.Trace{StageDone: func(i signer.StageInfo) {
		if i.Stage == signer.StageDevice && i.Slept {
			slept += i.Duration
		}
	}}
	ctx, cancel := context.WithTimeout(signer.WithTrace(context.Background(), tr), time.Minute)
	defer cancel()
	if _, err := s.SignContext(ctx, heights.Next(tm2.KindPrevote)); err != nil {
		t.Fatal(err)
	}
	if slept != quick.Sign {
		t.Errorf("slept device stage %v in the trace, want %v", slept, quick.Sign)
	}

	slow := ledgersim.NanoSPlus
	slow.Sign = 10 * time.Second
	dev = ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Realtime, Profile: slow})
	s2, err := ledger.Open(context.Background(), ledger.Config{Dial: speculosSim(t, dev)})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	ctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := s2.SignContext(ctx, tm2.NewHeights("", 1).Next(tm2.KindPrevote)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a 10 s sign under 100 ms: %v, want context.DeadlineExceeded", err)
	}
}
