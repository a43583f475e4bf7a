package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/signerkit/signerkit/ledger/internal/speculos"
)

// SpeculosDialer returns a Dialer for Speculos's raw APDU server
// (LedgerHQ/speculos, default 127.0.0.1:9999; docs/protocols.md A.10): each
// command goes as u32be(len) || apdu, each reply comes back as
// u32be(len(data)) || data || SW1 SW2. ledgersim's Speculos face speaks
// the same protocol; ledgersim.SpeculosDialer adds the simulator's
// modeled time and deadlines.
func SpeculosDialer(addr string) Dialer {
	return func(ctx context.Context) (Transport, error) {
		c, err := speculos.Dial(ctx, addr, nil)
		if err != nil {
			return nil, err
		}
		return &SpeculosTransport{c: c}, nil
	}
}

// SpeculosTransport is a Transport over one TCP connection to Speculos.
// An exchange that fails or is cut short by its context leaves the
// connection out of step, so the Signer drops it and dials again. It is
// safe for concurrent use; one exchange runs at a time.
type SpeculosTransport struct {
	c *speculos.Conn
}

var _ Transport = (*SpeculosTransport)(nil)

// Exchange sends apdu and returns the response (data and status word).
func (t *SpeculosTransport) Exchange(ctx context.Context, apdu []byte) ([]byte, error) {
	return t.c.Exchange(ctx, apdu)
}

// Close closes the connection; an exchange in flight returns ErrClosed.
func (t *SpeculosTransport) Close() error { return t.c.Close() }

// DeadlineError says that a Transport judged, in the device's modeled
// time, that the device could not have answered an exchange by the
// caller's deadline: the device did execute the APDU, and a real one would
// still have been busy when the caller gave up. The caller's trace has the
// modeled time up to the deadline. It unwraps to context.DeadlineExceeded.
//
// The transport of ledgersim.SpeculosDialer returns it in the simulator's
// accounted time mode; a real device never causes it. The Signer returns it as the sign's error and drops the
// transport, as after any failed exchange.
type DeadlineError struct {
	// Modeled is the exchange's modeled time (USB, confirmation and
	// device), and Accounted the part of it before the deadline.
	Modeled, Accounted time.Duration
}

// Error describes the timeout in modeled time.
func (e *DeadlineError) Error() string {
	return fmt.Sprintf("ledger: speculos: the device needed %v of modeled time, %v of it before the deadline: %v", e.Modeled, e.Accounted, context.DeadlineExceeded)
}

// Unwrap returns context.DeadlineExceeded.
func (e *DeadlineError) Unwrap() error { return context.DeadlineExceeded }
