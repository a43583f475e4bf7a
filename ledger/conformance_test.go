package ledger_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/ledger/ledgersim"
	"github.com/signerkit/signerkit/signbytes/signbytestest"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

// face names a way to reach the simulator.
type face struct {
	name string
	dial func(d *ledgersim.Device, t testing.TB) ledger.Dialer
}

var faces = []face{
	{"apdu", func(d *ledgersim.Device, t testing.TB) ledger.Dialer { return d.Dialer() }},
	{"hid", func(d *ledgersim.Device, t testing.TB) ledger.Dialer { return d.HIDDialer() }},
	{"speculos", func(d *ledgersim.Device, t testing.TB) ledger.Dialer {
		srv, err := d.ServeSpeculos()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		return ledger.SpeculosDialer(srv.Addr())
	}},
	{"hid+upstream-stall", func(d *ledgersim.Device, t testing.TB) ledger.Dialer { return d.UpstreamDialer(d.HIDDialer()) }},
}

func TestConformanceValidatorApp(t *testing.T) {
	t.Parallel()
	for _, f := range faces {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			dev := ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Accounted})
			dial := f.dial(dev, t)
			heights := signbytestest.NewHeights("", 1)
			for _, chunk := range []int{32, 0} {
				open := func() (signer.Signer, error) {
					return ledger.Open(context.Background(), ledger.Config{Dial: dial, ChunkSize: chunk})
				}
				signertest.Run(t, open, signertest.Options{
					Message:     heights.OfSize,
					Concurrency: 1,
					Hang:        dev.Hang,
					Timeout:     10 * time.Second,
				})
			}
		})
	}
}

func TestConformanceRaw(t *testing.T) {
	t.Parallel()
	for _, f := range faces {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			dev := ledgersim.MustNew(ledgersim.Config{Raw: true, Time: ledgersim.Accounted})
			dial := f.dial(dev, t)
			open := func() (signer.Signer, error) {
				return ledger.Open(context.Background(), ledger.Config{Dial: dial, MaxMessage: ledger.NoMessageLimit})
			}
			signertest.Run(t, open, signertest.Options{
				MaxMessage: dev.Profile().BufferSize,
				Hang:       dev.Hang,
				Timeout:    10 * time.Second,
			})
		})
	}
}

// TestRealDevice runs the suite against a real Ledger running the
// validator app (SIGNERKIT_LEDGER=hid or a HID path) through Open's
// default HID dialer, or Speculos (SIGNERKIT_SPECULOS=host:port) through
// a ledger: URI. The
// first sign needs confirming on the device. Package ledgergo runs the
// same against ledger-go's transport.
func TestRealDevice(t *testing.T) {
	type target struct {
		name string
		open signertest.Factory
	}
	var targets []target
	if env := os.Getenv("SIGNERKIT_LEDGER"); env != "" {
		path := env
		if strings.EqualFold(env, "hid") {
			path = ""
		}
		targets = append(targets, target{"hid", func() (signer.Signer, error) {
			return ledger.Open(context.Background(), ledger.Config{Path: path, ChunkSize: 32})
		}})
	}
	if addr := os.Getenv("SIGNERKIT_SPECULOS"); addr != "" {
		targets = append(targets, target{"speculos", func() (signer.Signer, error) {
			return signer.Open(context.Background(), "ledger:speculos="+addr+"?chunk-size=32")
		}})
	}
	if len(targets) == 0 {
		t.Skip("set SIGNERKIT_LEDGER=hid (or a HID path) or SIGNERKIT_SPECULOS=host:port to run against a real device or Speculos")
	}
	heights := signbytestest.NewHeights("", time.Now().UnixMilli())
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			signertest.Run(t, tg.open, signertest.Options{Message: heights.OfSize, Concurrency: 1, Timeout: 2 * time.Minute})
		})
	}
}

// Signers opened by URI (signer.Open, over the simulator's Speculos face)
// and by a Store's OpenKey pass the suite too.
func TestConformanceURIAndStore(t *testing.T) {
	t.Parallel()
	t.Run("uri", func(t *testing.T) {
		t.Parallel()
		dev := ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Accounted})
		srv, err := dev.ServeSpeculos()
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		heights := signbytestest.NewHeights("", 1)
		open := func() (signer.Signer, error) {
			return signer.Open(context.Background(), "ledger:speculos="+srv.Addr()+"?chunk-size=32")
		}
		signertest.Run(t, open, signertest.Options{Message: heights.OfSize, Concurrency: 1, Hang: dev.Hang, Timeout: 10 * time.Second})
	})
	t.Run("store", func(t *testing.T) {
		t.Parallel()
		dev := ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Accounted})
		st, err := ledger.OpenStore(context.Background(), ledger.Config{Dial: dev.HIDDialer()})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		keys, err := st.ListKeys(context.Background())
		if err != nil || len(keys) != 1 {
			t.Fatalf("ListKeys: %v, %v", keys, err)
		}
		heights := signbytestest.NewHeights("", 1)
		open := func() (signer.Signer, error) { return st.OpenKey(context.Background(), keys[0].Ref()) }
		signertest.Run(t, open, signertest.Options{Message: heights.OfSize, Concurrency: 1, Hang: dev.Hang, Timeout: 10 * time.Second})
	})
}
