package ledgersim

import (
	"context"
	"time"

	"github.com/signerkit/signerkit/internal/simtime"
	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// UpstreamStall wraps a transport with zondax/ledger-go's host-side stall:
// LedgerDeviceHID.Exchange sleeps 50 ms (drainRead, ledger_hid.go) before
// every APDU. The stall is spent as a modeled StageStall on the caller's
// trace, and slept in realtime mode, before each exchange. It is how the
// simulator shows what the upstream transport costs: the real
// LedgerDeviceHID needs a USB device, so against the simulator our own
// framing runs with the upstream stall modeled on top.
func UpstreamStall(t ledger.Transport, p Profile, mode TimeMode) ledger.Transport {
	if p == (Profile{}) {
		p = NanoSPlus
	}
	return &stalled{t: t, stall: p.UpstreamStall, mode: mode.simMode()}
}

// UpstreamDialer is dial with UpstreamStall applied to each transport it
// makes, with d's profile and time mode.
func (d *Device) UpstreamDialer(dial ledger.Dialer) ledger.Dialer {
	return func(ctx context.Context) (ledger.Transport, error) {
		t, err := dial(ctx)
		if err != nil {
			return nil, err
		}
		return UpstreamStall(t, d.profile, d.Time()), nil
	}
}

type stalled struct {
	t     ledger.Transport
	stall time.Duration
	mode  simtime.Mode
}

func (s *stalled) Exchange(ctx context.Context, apdu []byte) ([]byte, error) {
	if err := simtime.Spend(ctx, s.mode, signertrace.StageStall, s.stall, stallProfile); err != nil {
		return nil, err
	}
	return s.t.Exchange(ctx, apdu)
}

func (s *stalled) Close() error { return s.t.Close() }
