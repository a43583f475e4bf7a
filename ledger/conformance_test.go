package ledger_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/signerkit/signerkit/internal/tm2"
	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/ledger/ledgersim"
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
	for _, f := range faces {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			dev := ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Accounted})
			dial := f.dial(dev, t)
			heights := tm2.NewHeights("", 1)
			for _, chunk := range []int{32, 0} {
				open := func() (signer.Signer, error) {
					return ledger.New(context.Background(), dial, ledger.Config{ChunkSize: chunk})
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
	for _, f := range faces {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			dev := ledgersim.MustNew(ledgersim.Config{Raw: true, Time: ledgersim.Accounted})
			dial := f.dial(dev, t)
			open := func() (signer.Signer, error) {
				return ledger.New(context.Background(), dial, ledger.Config{})
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
// validator app (SIGNERKIT_LEDGER=hid or a HID path) or Speculos
// (SIGNERKIT_SPECULOS=host:port). The first sign needs confirming on the
// device.
func TestRealDevice(t *testing.T) {
	var dials []face
	if env := os.Getenv("SIGNERKIT_LEDGER"); env != "" {
		path := env
		if strings.EqualFold(env, "hid") {
			path = ""
		}
		dials = append(dials,
			face{"hid", func(*ledgersim.Device, testing.TB) ledger.Dialer { return ledger.HIDDialer(path) }},
			face{"ledger-go", func(*ledgersim.Device, testing.TB) ledger.Dialer { return ledger.LedgerGoDialer(0) }})
	}
	if addr := os.Getenv("SIGNERKIT_SPECULOS"); addr != "" {
		dials = append(dials, face{"speculos", func(*ledgersim.Device, testing.TB) ledger.Dialer { return ledger.SpeculosDialer(addr) }})
	}
	if len(dials) == 0 {
		t.Skip("set SIGNERKIT_LEDGER=hid (or a HID path) or SIGNERKIT_SPECULOS=host:port to run against a real device or Speculos")
	}
	heights := tm2.NewHeights("", time.Now().UnixMilli())
	for _, f := range dials {
		t.Run(f.name, func(t *testing.T) {
			dial := f.dial(nil, t)
			open := func() (signer.Signer, error) {
				return ledger.New(context.Background(), dial, ledger.Config{ChunkSize: 32})
			}
			signertest.Run(t, open, signertest.Options{Message: heights.OfSize, Concurrency: 1, Timeout: 2 * time.Minute})
		})
	}
}
