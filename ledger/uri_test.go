package ledger_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/ledger/ledgersim"
	"github.com/signerkit/signerkit/signbytes/signbytestest"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertrace"
)

func TestParseURI(t *testing.T) {
	for _, tc := range []struct {
		uri      string
		path     string
		speculos bool
		chunk    int
		min      ledger.Version
	}{
		{uri: "ledger:"},
		{uri: "LEDGER:"},
		{uri: "ledger:hid=/dev/hidraw3", path: "/dev/hidraw3"},
		{uri: "ledger:hid=/dev/hid%3Braw", path: "/dev/hid;raw"},
		{uri: "ledger:hid=/dev/hidraw3?chunk-size=32", path: "/dev/hidraw3", chunk: 32},
		{uri: "ledger:speculos=127.0.0.1:9999", speculos: true},
		{uri: "ledger:speculos=[::1]:9999?min-version=0.9.1", speculos: true, min: ledger.Version{Minor: 9, Patch: 1}},
		{uri: "ledger:?chunk-size=1", chunk: 1},
		{uri: "ledger:?chunk-size=250", chunk: 250},
		{uri: "ledger:?chunk-size=0x20", chunk: 32},
		{uri: "ledger:?min-version=1.2.255", min: ledger.Version{Major: 1, Minor: 2, Patch: 255}},
	} {
		cfg, err := ledger.ParseURI(tc.uri)
		if err != nil {
			t.Errorf("%s: %v", tc.uri, err)
			continue
		}
		if cfg.Path != tc.path || (cfg.Dial != nil) != tc.speculos || cfg.ChunkSize != tc.chunk || cfg.MinVersion != tc.min {
			t.Errorf("%s: got Path %q, Dial set %v, ChunkSize %d, MinVersion %v; want %q, %v, %d, %v",
				tc.uri, cfg.Path, cfg.Dial != nil, cfg.ChunkSize, cfg.MinVersion, tc.path, tc.speculos, tc.chunk, tc.min)
		}
	}
	if cfg, err := ledger.ParseURI("ledger:?sign-timeout=45s"); err != nil || cfg.SignTimeout != 45*time.Second {
		t.Errorf("sign-timeout=45s: SignTimeout %v, %v", cfg.SignTimeout, err)
	}
}

// Every URI that cannot be used is a *signer.URIError wrapping
// ErrInvalidArgument that names the attribute at fault (none when the URI
// as a whole is).
func TestParseURIErrors(t *testing.T) {
	for _, tc := range []struct {
		uri, attr string
	}{
		{"ledger", ""},
		{"keybase:dir=/tmp", ""},
		{"ledger:hid", ""},
		{"ledger:hid=/a;hid=/b", "hid"},
		{"ledger:hid=", "hid"},
		{"ledger:hid=%zz", "hid"},
		{"ledger:hid=/dev/hidraw0;speculos=127.0.0.1:9999", "speculos"},
		{"ledger:speculos=", "speculos"},
		{"ledger:speculos=localhost", "speculos"},
		{"ledger:speculos=localhost:", "speculos"},
		{"ledger:speculos=127.0.0.1:9999?simulator=true", "simulator"}, // ledgersim: URIs are the simulator's
		{"ledger:?chunk-size=0", "chunk-size"},
		{"ledger:?chunk-size=251", "chunk-size"},
		{"ledger:?chunk-size=-1", "chunk-size"},
		{"ledger:?chunk-size=32k", "chunk-size"},
		{"ledger:?chunk-size=", "chunk-size"},
		{"ledger:?sign-timeout=0s", "sign-timeout"},
		{"ledger:?sign-timeout=-1s", "sign-timeout"},
		{"ledger:?sign-timeout=30", "sign-timeout"},
		{"ledger:?min-version=1.2", "min-version"},
		{"ledger:?min-version=1.2.3.4", "min-version"},
		{"ledger:?min-version=1.2.256", "min-version"},
		{"ledger:?min-version=1..3", "min-version"},
		{"ledger:?min-version=+1.2.3", "min-version"},
		{"ledger:?min-version=v1.2.3", "min-version"},
		{"ledger:?hid=/dev/hidraw0", "hid"},    // a path attribute in the query
		{"ledger:chunk-size=32", "chunk-size"}, // a query attribute in the path
		{"ledger:path=/dev/hidraw0", "path"},
		{"ledger:?pin-source=env:PIN", "pin-source"},
		{"ledger:pin-value=1234", "pin-value"},
		{"ledger:?pin-value=1234", "pin-value"},
		{"ledger:id=0x01", "id"},
	} {
		cfg, err := ledger.ParseURI(tc.uri)
		var ue *signer.URIError
		if !errors.As(err, &ue) || !errors.Is(err, signer.ErrInvalidArgument) {
			t.Errorf("%s: got %+v, %v; want a *signer.URIError wrapping ErrInvalidArgument", tc.uri, cfg, err)
			continue
		}
		if ue.Attr != tc.attr {
			t.Errorf("%s: %v names attribute %q, want %q", tc.uri, err, ue.Attr, tc.attr)
		}
		if tc.attr != "" && !strings.Contains(err.Error(), "attribute "+tc.attr) {
			t.Errorf("%s: %q does not name the attribute", tc.uri, err)
		}
		if strings.Contains(err.Error(), "1234") {
			t.Errorf("%s: %q quotes the PIN", tc.uri, err)
		}
		// signer.Open refuses the same URIs with the same error.
		if s, err2 := signer.Open(context.Background(), tc.uri); err2 == nil || s != nil {
			t.Errorf("signer.Open(%s): %v, %v", tc.uri, s, err2)
		} else if !strings.HasPrefix(tc.uri, "keybase") && err2.Error() != err.Error() {
			t.Errorf("signer.Open(%s): %q, ParseURI: %q", tc.uri, err2, err)
		}
	}
}

// FuzzParseURI: ParseURI never panics; what it refuses is a
// *signer.URIError wrapping ErrInvalidArgument; what it accepts is a
// Config that Open would take, and that says what signer.ParseURI reads in
// the URI.
func FuzzParseURI(f *testing.F) {
	for _, s := range []string{
		"ledger:", "ledger:hid=/dev/hidraw3?chunk-size=32", "ledger:speculos=127.0.0.1:9999?min-version=0.9.1",
		"ledger:?chunk-size=0x10", "ledger:?min-version=255.255.255", "ledger:hid=%3B", "ledger:?pin-source=env:X",
		"ledger:hid=a;speculos=b:1", "Ledger:chunk-size=250", "ledger:?chunk-size=+5",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		cfg, err := ledger.ParseURI(uri)
		if err != nil {
			var ue *signer.URIError
			if !errors.As(err, &ue) || !errors.Is(err, signer.ErrInvalidArgument) {
				t.Fatalf("%q: %v is not a *signer.URIError wrapping ErrInvalidArgument", uri, err)
			}
			return
		}
		u, err := signer.ParseURI(uri)
		if err != nil || u.Scheme != "ledger" {
			t.Fatalf("%q accepted, but signer.ParseURI says %v, %v", uri, u, err)
		}
		if cfg.ChunkSize < 0 || cfg.ChunkSize > ledger.MaxChunkSize {
			t.Fatalf("%q: ChunkSize %d", uri, cfg.ChunkSize)
		}
		if cfg.Dial != nil && cfg.Path != "" {
			t.Fatalf("%q: both Dial and Path", uri)
		}
		for _, a := range append(u.Path, u.Query...) {
			switch a.Name {
			case "hid":
				if cfg.Path != a.Value || cfg.Path == "" {
					t.Fatalf("%q: Path %q for hid=%q", uri, cfg.Path, a.Value)
				}
			case "speculos":
				if cfg.Dial == nil {
					t.Fatalf("%q: no Dial for speculos=%q", uri, a.Value)
				}
			case "chunk-size":
				digits, base := a.Value, 10
				if len(digits) > 2 && strings.EqualFold(digits[:2], "0x") {
					digits, base = digits[2:], 16
				}
				n, err := strconv.ParseUint(digits, base, 64)
				if err != nil || n != uint64(cfg.ChunkSize) || n == 0 {
					t.Fatalf("%q: ChunkSize %d for chunk-size=%q", uri, cfg.ChunkSize, a.Value)
				}
			case "min-version":
				if got := cfg.MinVersion.String(); !sameVersion(got, a.Value) {
					t.Fatalf("%q: MinVersion %v for min-version=%q", uri, got, a.Value)
				}
			default:
				t.Fatalf("%q: accepted attribute %s", uri, a.Name)
			}
		}
		if cfg.Dial == nil && cfg.Path == "" {
			if _, ok := u.Attr("hid"); ok {
				t.Fatalf("%q: hid attribute but no Path", uri)
			}
		}
	})
}

// sameVersion reports whether "x.y.z" and a written version with decimal
// parts (leading zeros allowed) are the same.
func sameVersion(got, written string) bool {
	g, w := strings.Split(got, "."), strings.Split(written, ".")
	if len(g) != 3 || len(w) != 3 {
		return false
	}
	for i := range g {
		a, err1 := strconv.Atoi(g[i])
		b, err2 := strconv.Atoi(w[i])
		if err1 != nil || err2 != nil || a != b {
			return false
		}
	}
	return true
}

// signer.Open of a ledger:speculos= URI reaches the simulator's Speculos
// face, honours chunk-size and min-version, and signs what crypto/ed25519
// verifies under the device's key.
func TestOpenURISpeculos(t *testing.T) {
	dev := ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Accounted})
	srv, err := dev.ServeSpeculos()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := signer.Open(ctx, "ledger:speculos="+srv.Addr()+"?chunk-size=32&min-version=0.9.1")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ls, ok := s.(*ledger.Signer)
	if !ok {
		t.Fatalf("signer.Open returned a %T, want *ledger.Signer", s)
	}
	if ls.ChunkSize() != 32 {
		t.Errorf("ChunkSize %d, want 32 from the URI", ls.ChunkSize())
	}
	if alg, err := signer.AlgorithmOf(s); err != nil || alg != signer.Ed25519 {
		t.Errorf("AlgorithmOf: %v, %v", alg, err)
	}
	pub, ok := s.Public().(ed25519.PublicKey)
	if !ok || !pub.Equal(dev.PublicKey()) {
		t.Fatalf("public key %x is not the device's %x", s.Public(), dev.PublicKey())
	}
	heights := signbytestest.NewHeights("test11", 1)
	for range 3 {
		msg := heights.Next(signbytestest.KindPrevote)
		col := signertrace.NewCollector()
		sig, err := s.SignContext(col.WithContext(ctx), msg)
		if err != nil {
			t.Fatal(err)
		}
		if !ed25519.Verify(dev.PublicKey(), msg, sig) {
			t.Fatalf("signature %x does not verify", sig)
		}
		if want := int64((len(msg) + 31) / 32); col.Summary().Count(signertrace.CountAPDUs) != want {
			t.Errorf("%d-byte message: %d APDUs, want %d at chunk-size 32", len(msg), col.Summary().Count(signertrace.CountAPDUs), want)
		}
	}

	// min-version above the app's: refused at open.
	s2, err := signer.Open(ctx, "ledger:speculos="+srv.Addr()+"?min-version=0.9.2")
	if !errors.Is(err, signer.ErrUnsupported) || s2 != nil {
		t.Errorf("min-version 0.9.2 against app 0.9.1: %v, %v; want ErrUnsupported", s2, err)
	}
	// Nothing listening: ErrDeviceNotFound, and a nil Signer.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	s3, err := signer.Open(ctx, "ledger:speculos="+addr)
	if !errors.Is(err, signer.ErrDeviceNotFound) || s3 != nil {
		t.Errorf("nothing at %s: %v, %v; want ErrDeviceNotFound", addr, s3, err)
	}
	checkPrefix(t, "speculos dial", err)
}
