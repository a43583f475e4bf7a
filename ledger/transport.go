package ledger

import (
	"context"
	"errors"
	"fmt"

	"github.com/signerkit/signerkit/signer"
)

// Transport carries APDUs to a device and back: the one seam between the
// validator-app client and the wire, where the HID transport, ledger-go's
// LedgerDeviceHID, Speculos and the simulator's APDU face plug in.
type Transport interface {
	// Exchange sends one command APDU and returns the response, data
	// followed by the two status-word bytes. It returns when the reply
	// arrives or ctx ends, whichever is first; errors wrap
	// signer.ErrDisconnected (the device went away), signer.ErrProtocol (a
	// reply that does not follow the framing), signer.ErrClosed, or ctx's
	// error, or are a *DeadlineError (a device modeled past ctx's
	// deadline). A status word other than 0x9000 is not an error here.
	Exchange(ctx context.Context, apdu []byte) ([]byte, error)
	// Close releases the device. An Exchange in flight returns an error
	// wrapping signer.ErrClosed. Close is idempotent.
	Close() error
}

// Dialer opens a Transport. The Signer calls it at open and again, on the
// next sign, after a transport failed (an unplugged device, a hung
// exchange), so a device that comes back is used again.
type Dialer func(ctx context.Context) (Transport, error)

// ctxError wraps ctx's error, adding what the transport saw before it gave
// up (reports it discarded), so a caller can tell a silent device from one
// that answered garbage.
func ctxError(ctx context.Context, what string, discarded int, lastDiscard error) error {
	err := context.Cause(ctx)
	if err == nil {
		err = ctx.Err()
	}
	if discarded == 0 {
		return fmt.Errorf("ledger: %s: no reply: %w", what, err)
	}
	return &FrameError{Err: err, Discarded: discarded, Last: lastDiscard}
}

// FrameError says that no valid reply arrived before the context ended but
// reports that did not fit the exchange (wrong channel, tag or sequence,
// short or garbled) did, and were discarded. It unwraps to both the
// context's error and signer.ErrProtocol.
type FrameError struct {
	Err       error // the context's error
	Discarded int   // reports discarded
	Last      error // why the last one was
}

// Error says what the context ended with and why the last report was
// discarded.
func (e *FrameError) Error() string {
	return fmt.Sprintf("ledger: no valid reply (%v) after discarding %d report(s), the last because %v", e.Err, e.Discarded, e.Last)
}

// Unwrap returns the context's error and signer.ErrProtocol.
func (e *FrameError) Unwrap() []error { return []error{e.Err, signer.ErrProtocol} }

// isCtxErr reports whether err came from a context ending.
func isCtxErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
