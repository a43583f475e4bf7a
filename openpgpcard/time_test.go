package openpgpcard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/signerkit/signerkit/internal/simtime"
	"github.com/signerkit/signerkit/openpgpcard"
	"github.com/signerkit/signerkit/openpgpcard/cardsim"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// openOn imports the 2048-bit test key into a card of profile p and opens
// its signature key.
func openOn(t *testing.T, p cardsim.Profile, mode simtime.Mode) *openpgpcard.Signer {
	t.Helper()
	priv, err := rsaKeys[2048]()
	if err != nil {
		t.Fatal(err)
	}
	card := cardsim.New(cardsim.Config{Profile: p, Time: mode})
	if err := card.ImportKey(cardsim.SlotSign, priv); err != nil {
		t.Fatal(err)
	}
	s, err := openpgpcard.Open(context.Background(), userConfig(card, openpgpcard.KeySign))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestModeledTime: in accounted time a sign reports the profile's device
// and wire time to the trace without sleeping it, and a deadline shorter
// than the modeled time fails at once with context.DeadlineExceeded; in
// real time the stages are reported as slept.
func TestModeledTime(t *testing.T) {
	t.Parallel()
	s := openOn(t, cardsim.FST01, simtime.Accounted)
	col := signertrace.NewCollector()
	if _, err := s.SignContext(col.WithContext(context.Background()), []byte("m")); err != nil {
		t.Fatal(err)
	}
	sum := col.Summary()
	if dev := sum.Stage(signertrace.StageDevice); dev.Modeled != 1100*time.Millisecond || dev.Slept != 0 || dev.Profile != cardsim.FST01.Name {
		t.Fatalf("device stage %+v, want 1.1 s modeled, none slept, profile %q", dev, cardsim.FST01.Name)
	}
	// One APDU: Open verified PW1, which holds for the first signature;
	// later ones send VERIFY first.
	if wire := sum.Stage(signertrace.StageWire); wire.Modeled != cardsim.FST01.APDU {
		t.Fatalf("wire stage %+v, want one APDU's time", wire)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if _, err := s.SignContext(ctx, []byte("m")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a 1.1 s sign under a 0.5 s deadline: %v, want DeadlineExceeded", err)
	}

	p := cardsim.YubiKey4
	p.Sign = map[cardsim.Algorithm]time.Duration{cardsim.RSA2048: 20 * time.Millisecond}
	rt := openOn(t, p, simtime.Realtime)
	col = signertrace.NewCollector()
	if _, err := rt.SignContext(col.WithContext(context.Background()), []byte("m")); err != nil {
		t.Fatal(err)
	}
	if dev := col.Summary().Stage(signertrace.StageDevice); dev.Slept != 20*time.Millisecond {
		t.Fatalf("real time: device stage %+v, want 20 ms slept", dev)
	}
}
