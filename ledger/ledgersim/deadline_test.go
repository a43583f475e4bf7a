package ledgersim_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"testing"
	"time"

	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/ledger/ledgersim"
	"github.com/signerkit/signerkit/signbytes/signbytestest"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// speculosSim serves dev's Speculos face for the test and returns a
// simulator client's dialer for it.
func speculosSim(t *testing.T, dev *ledgersim.Device) ledger.Dialer {
	srv, err := dev.ServeSpeculos()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return ledgersim.SpeculosDialer(srv.Addr())
}

// The deadline tests model a sign far longer than the real time a test
// takes, even on a loaded machine, and deadlines that differ from it by
// seconds: whether a sign fits is decided by modeled time alone.
const (
	slowSignTime = 20 * time.Second // a modeled sign
	shortTime    = 10 * time.Second // a deadline the sign does not fit in
	longTime     = time.Hour        // a deadline it fits in
)

// slowDevice is an accounted Nano S Plus whose sign takes slowSignTime.
func slowDevice() *ledgersim.Device {
	p := ledgersim.NanoSPlus
	p.Sign = slowSignTime
	return ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Accounted, Profile: p})
}

// TestAccountedDeadline: in accounted mode a sign whose modeled time runs
// past the caller's deadline fails with context.DeadlineExceeded, having
// accounted its modeled time up to the deadline; with enough time it
// signs. On the Speculos face the deadline goes to the simulator, and the
// modeled time comes back, in signerkit's extension frames
// (ledgersim.SpeculosDialer).
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
			dev := slowDevice()
			s, err := ledger.Open(context.Background(), ledger.Config{Dial: f.dial(t, dev)})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			heights := signbytestest.NewHeights("", 1)

			col := signertrace.NewCollector()
			ctx, cancel := context.WithTimeout(col.WithContext(context.Background()), shortTime)
			defer cancel()
			_, err = s.SignContext(ctx, heights.Next(signbytestest.KindPrevote))
			if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, signer.ErrDisconnected) {
				t.Fatalf("sign of %v modeled under %v: %v, want context.DeadlineExceeded, not a disconnect", slowSignTime, shortTime, err)
			}
			var de *ledger.DeadlineError
			if f.name == "speculos" && (!errors.As(err, &de) || de.Modeled < dev.Profile().Sign || de.Accounted <= 0 || de.Accounted > shortTime) {
				t.Errorf("Speculos face: %#v, want a *ledger.DeadlineError of the sign's modeled time, accounted up to the deadline", err)
			}
			sum := col.Summary()
			dev0 := sum.Stage(signertrace.StageDevice).Modeled
			var total time.Duration
			for _, st := range signertrace.Stages() {
				total += sum.Stage(st).Modeled
			}
			if dev0 <= 0 || dev0 >= dev.Profile().Sign || total > shortTime {
				t.Errorf("device stage %v of %v, %v modeled in all: want the sign accounted up to the %v deadline", dev0, dev.Profile().Sign, total, shortTime)
			}

			// With time enough, the next sign succeeds and verifies.
			col = signertrace.NewCollector()
			ctx, cancel = context.WithTimeout(col.WithContext(context.Background()), longTime)
			defer cancel()
			msg := heights.Next(signbytestest.KindPrevote)
			sig, err := s.SignContext(ctx, msg)
			if err != nil {
				t.Fatal(err)
			}
			if !ed25519.Verify(dev.PublicKey(), msg, sig) {
				t.Fatal("signature does not verify")
			}
			if got := col.Summary().Stage(signertrace.StageDevice).Modeled; got != dev.Profile().Sign {
				t.Errorf("device stage %v, want %v", got, dev.Profile().Sign)
			}
		})
	}
}

// TestAccountedDeadlineDoesNotWait: a modeled sign longer than the
// caller's deadline fails without waiting for the deadline: the device
// stage is accounted, not slept, and the error is the simulator's (the
// deadline, an hour away, has not passed; were the sign to sleep, the test
// would run into go test's timeout).
func TestAccountedDeadlineDoesNotWait(t *testing.T) {
	for _, face := range []string{"apdu", "speculos"} {
		t.Run(face, func(t *testing.T) {
			slow := ledgersim.NanoSPlus
			slow.Sign = 2 * longTime
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
			var accounted time.Duration
			slept := false
			tr := &signertrace.Trace{StageDone: func(i signertrace.StageInfo) {
				if i.Stage == signertrace.StageDevice && i.Source == signertrace.Modeled {
					accounted += i.Duration
					slept = slept || i.Slept
				}
			}}
			ctx, cancel := context.WithTimeout(signertrace.WithTrace(context.Background(), tr), longTime)
			defer cancel()
			_, err = s.SignContext(ctx, signbytestest.NewHeights("", 1).Next(signbytestest.KindPrevote))
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want context.DeadlineExceeded", err)
			}
			if slept || accounted <= 0 || accounted > longTime {
				t.Errorf("device stage: %v accounted (slept: %v), want up to the %v deadline, accounted only", accounted, slept, longTime)
			}
		})
	}
}

// TestSpeculosDeadlineShared: modeled time accounted under one context
// on the Speculos face counts against its deadline for the next sign, as
// on the in-process faces: two signs of 20 modeled seconds do not both
// fit in 30 seconds.
func TestSpeculosDeadlineShared(t *testing.T) {
	dev := slowDevice()
	s, err := ledger.Open(context.Background(), ledger.Config{Dial: speculosSim(t, dev)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	heights := signbytestest.NewHeights("", 1)
	const deadline = slowSignTime + shortTime
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	if _, err := s.SignContext(ctx, heights.Next(signbytestest.KindPrevote)); err != nil {
		t.Fatalf("first sign: %v", err)
	}
	_, err = s.SignContext(ctx, heights.Next(signbytestest.KindPrecommit))
	var de *ledger.DeadlineError
	if !errors.As(err, &de) || de.Accounted > deadline-slowSignTime {
		t.Fatalf("second sign under the same %v: %v, want a *ledger.DeadlineError accounting at most %v", deadline, err, deadline-slowSignTime)
	}
}

// TestSpeculosStandardClient: a standard Speculos client (SpeculosDialer)
// sends no deadline, so in accounted mode its sign answers at once and
// succeeds whatever the deadline: the Speculos face speaks plain Speculos
// to it.
func TestSpeculosStandardClient(t *testing.T) {
	dev := slowDevice()
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
	col := signertrace.NewCollector()
	ctx, cancel := context.WithTimeout(col.WithContext(context.Background()), shortTime) // shorter than the modeled sign
	defer cancel()
	msg := signbytestest.NewHeights("", 1).Next(signbytestest.KindPrevote)
	sig, err := s.SignContext(ctx, msg)
	if err != nil || !ed25519.Verify(dev.PublicKey(), msg, sig) {
		t.Fatalf("sign: %v", err)
	}
	if got := col.Summary().Stage(signertrace.StageDevice).Modeled; got != 0 {
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
	heights := signbytestest.NewHeights("", 1)
	var slept time.Duration
	tr := &signertrace.Trace{StageDone: func(i signertrace.StageInfo) {
		if i.Stage == signertrace.StageDevice && i.Slept {
			slept += i.Duration
		}
	}}
	ctx, cancel := context.WithTimeout(signertrace.WithTrace(context.Background(), tr), longTime)
	defer cancel()
	if _, err := s.SignContext(ctx, heights.Next(signbytestest.KindPrevote)); err != nil {
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
	if _, err := s2.SignContext(ctx, signbytestest.NewHeights("", 1).Next(signbytestest.KindPrevote)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a 10 s sign under 100 ms: %v, want context.DeadlineExceeded", err)
	}
}
