package ledgersim

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/signer"
)

// Transport returns the device's APDU face: a ledger.Transport that hands
// each APDU to the app, as the seam ledger-go's LedgerDevice offers. Its
// modeled time goes to the caller's trace as wire (what the APDU and its
// reply would take over USB HID), confirm and device stages. Faults
// FaultUnplug and FaultHang apply; the others are HID-level and ignored.
// It fails with signer.ErrDeviceNotFound while the device is unplugged.
// In accounted mode an exchange whose modeled time would run past ctx's
// deadline (counting the modeled time already spent under ctx) fails at
// once with an error wrapping context.DeadlineExceeded.
func (d *Device) Transport() (ledger.Transport, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.plugged {
		return nil, fmt.Errorf("ledgersim: unplugged: %w", signer.ErrDeviceNotFound)
	}
	return &apduPort{d: d, gone: d.gone, closed: make(chan struct{})}, nil
}

// Dialer returns a ledger.Dialer over Transport.
func (d *Device) Dialer() ledger.Dialer {
	return func(ctx context.Context) (ledger.Transport, error) { return d.Transport() }
}

type apduPort struct {
	d      *Device
	gone   chan struct{}
	closed chan struct{}
	once   sync.Once
}

func (p *apduPort) Exchange(ctx context.Context, apdu []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d := p.d
	d.mu.Lock()
	select {
	case <-p.closed:
		d.mu.Unlock()
		return nil, fmt.Errorf("ledgersim: %w", signer.ErrClosed)
	case <-p.gone:
		d.mu.Unlock()
		return nil, fmt.Errorf("ledgersim: unplugged: %w", signer.ErrDisconnected)
	default:
	}
	resp, c, _, ok := d.receiveLocked(apdu)
	d.mu.Unlock()
	if !ok { // lost, or unplugged (p.gone is closed)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-p.closed:
			return nil, fmt.Errorf("ledgersim: %w", signer.ErrClosed)
		case <-p.gone:
			return nil, fmt.Errorf("ledgersim: unplugged: %w", signer.ErrDisconnected)
		}
		// A lost APDU is never answered, even once the device is released.
	}
	if err := d.spend(ctx, p.closed, len(apdu), len(resp), c); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("ledgersim: %w", err) // modeled time ran past ctx's deadline
		}
		if ctx.Err() == nil {
			return nil, fmt.Errorf("ledgersim: %w", signer.ErrClosed)
		}
		return nil, err
	}
	return resp, nil
}

func (p *apduPort) Close() error {
	p.once.Do(func() { close(p.closed) })
	return nil
}
