package ledgersim_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/signerkit/signerkit/ledger/ledgersim"
	"github.com/signerkit/signerkit/signbytes/signbytestest"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// TestURIStall: stall=ledger-go puts ledger-go's 50 ms before every APDU,
// slept (the device itself is accounted, so the stall is all the wall
// time a sign adds) and reported as a modeled stall stage; other values,
// or the attribute twice, are refused; the ledger: attributes around it
// still reach package ledger.
func TestURIStall(t *testing.T) {
	srv, err := ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Accounted}).ServeSpeculos()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	s, err := signer.Open(context.Background(), "ledgersim:speculos="+srv.Addr()+"?sign-timeout=5s&stall=ledger-go")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	heights := signbytestest.NewHeights("", 1)
	col := signertrace.NewCollector()
	began := time.Now()
	if _, err := s.SignContext(col.WithContext(context.Background()), heights.Next(signbytestest.KindPrevote)); err != nil {
		t.Fatal(err)
	}
	took := time.Since(began)
	sum := col.Summary()
	stall := sum.Stage(signertrace.StageStall).Modeled
	apdus := sum.Count(signertrace.CountAPDUs)
	if apdus < 1 || stall != time.Duration(apdus)*ledgersim.NanoSPlus.UpstreamStall {
		t.Errorf("a sign of %d APDUs reported a %v stall, want %v each", apdus, stall, ledgersim.NanoSPlus.UpstreamStall)
	}
	if took < stall {
		t.Errorf("the sign took %v, less than its %v stall: it was not slept", took, stall)
	}
	for _, bad := range []string{
		"ledgersim:speculos=127.0.0.1:1?stall=usb",
		"ledgersim:speculos=127.0.0.1:1?stall=ledger-go&stall=ledger-go",
		"ledgersim:speculos=127.0.0.1:1?stall=ledger-go&simulator=true",
	} {
		var ue *signer.URIError
		if _, err := ledgersim.ParseURI(bad); !errors.As(err, &ue) {
			t.Errorf("ParseURI(%q): %v, want a *signer.URIError", bad, err)
		}
	}
}

// FuzzParseURI: ledgersim's ParseURI never panics; what it refuses is a
// *signer.URIError wrapping ErrInvalidArgument; what it accepts names the
// Speculos face (a Dial), and holds stall=ledger-go at most once.
func FuzzParseURI(f *testing.F) {
	for _, s := range []string{
		"ledgersim:speculos=127.0.0.1:9999", "ledgersim:speculos=127.0.0.1:9999?stall=ledger-go",
		"ledgersim:speculos=127.0.0.1:9999?sign-timeout=5s&stall=ledger-go&chunk-size=32",
		"ledgersim:speculos=a:1?stall=", "ledgersim:speculos=a:1?stall=ledger-go&stall=ledger-go",
		"ledgersim:speculos=a:1?&stall=ledger-go&", "ledgersim:?stall=ledger-go", "ledgersim:speculos=a:1?stall",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		cfg, err := ledgersim.ParseURI(uri)
		if err != nil {
			var ue *signer.URIError
			if !errors.As(err, &ue) || !errors.Is(err, signer.ErrInvalidArgument) {
				t.Fatalf("%q: %v is not a *signer.URIError wrapping ErrInvalidArgument", uri, err)
			}
			return
		}
		if cfg.Dial == nil || cfg.Path != "" {
			t.Fatalf("%q accepted without naming the Speculos face: %+v", uri, cfg)
		}
	})
}
