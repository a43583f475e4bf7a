package ledgersim_test

import (
	"context"
	"errors"
	"testing"

	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/ledger/ledgersim"
	"github.com/signerkit/signerkit/signbytes/signbytestest"
	"github.com/signerkit/signerkit/signer"
)

// TestOpenURI: a ledgersim: URI opens the Speculos face through
// SpeculosDialer, which passes the deadline on: a sign whose modeled time
// runs past it fails with a *ledger.DeadlineError; the same face opened
// by a ledger: URI passes nothing on, and the same sign succeeds.
func TestOpenURI(t *testing.T) {
	srv, err := slowDevice().ServeSpeculos()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	heights := signbytestest.NewHeights("", 1)
	for _, scheme := range []string{"ledgersim", "LedgerSim", "ledger"} {
		s, err := signer.Open(context.Background(), scheme+":speculos="+srv.Addr())
		if err != nil {
			t.Fatalf("Open(%s:…): %v", scheme, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), shortTime)
		_, err = s.SignContext(ctx, heights.Next(signbytestest.KindPrevote))
		cancel()
		s.Close()
		var de *ledger.DeadlineError
		if sim := scheme != "ledger"; sim && (!errors.As(err, &de) || de.Modeled < slowSignTime) {
			t.Errorf("%s: a %v sign under %v: %v, want a *ledger.DeadlineError", scheme, slowSignTime, shortTime, err)
		} else if !sim && err != nil {
			t.Errorf("%s: a sign that passes no deadline on: %v, want success", scheme, err)
		}
	}
	for _, bad := range []string{"ledgersim:", "ledgersim:hid=/dev/hidraw0", "ledgersim:speculos=localhost", "ledger:speculos=127.0.0.1:1", "ledgersim:speculos=127.0.0.1:1?simulator=true"} {
		_, err := ledgersim.ParseURI(bad)
		var ue *signer.URIError
		if !errors.As(err, &ue) || !errors.Is(err, signer.ErrInvalidArgument) {
			t.Errorf("ParseURI(%q): %v, want a *signer.URIError", bad, err)
		}
	}
}
