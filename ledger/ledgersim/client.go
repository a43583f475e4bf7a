package ledgersim

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/signerkit/signerkit/internal/simtime"
	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/ledger/internal/specext"
	"github.com/signerkit/signerkit/ledger/internal/speculos"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// SpeculosDialer returns a ledger.Dialer for the Speculos face of this
// simulator (Device.ServeSpeculos, cmd/ledgersim) at addr, for
// ledger.Config.Dial. It speaks Speculos's protocol plus signerkit's own
// frames (ledger/internal/specext), which only the simulator understands:
// before each APDU it tells the simulator how much time the caller's
// deadline leaves (less the modeled time already accounted under it), and
// the simulator answers with the exchange's modeled stages, which the
// transport reports to the caller's signertrace.Trace (wire, confirm and
// device, as the in-process faces report them). In accounted mode, an
// exchange whose modeled time would run past the deadline gets no reply
// but the modeled time before the deadline, and fails at once with a
// *ledger.DeadlineError (context.DeadlineExceeded), as the in-process
// faces fail; the device has executed the APDU. In realtime mode the
// simulator sleeps and the connection's deadline, which is the context's,
// ends the wait.
//
// Never point it at a real Speculos, which would read the extension
// frames as garbage; and only at a simulator you trust: whatever answers
// at addr could put forged times in the caller's traces and metrics. For
// a real Speculos, or to talk to the simulator as one, use
// ledger.SpeculosDialer.
func SpeculosDialer(addr string) ledger.Dialer {
	return func(ctx context.Context) (ledger.Transport, error) {
		c, err := speculos.Dial(ctx, addr, timeExtension{})
		if err != nil {
			return nil, err
		}
		return c, nil
	}
}

// timeExtension is the client side of specext: the caller's deadline out,
// modeled time back.
type timeExtension struct{}

// Request appends a time-left frame.
func (timeExtension) Request(ctx context.Context, b []byte) []byte {
	dl, ok := ctx.Deadline()
	return specext.AppendTimeLeft(b, time.Until(dl)-simtime.AccountedUnder(ctx), ok)
}

// Reply reads a reply extension frame, reports its stages to ctx's trace
// and accounts those not slept against ctx's deadline. With KindDeadline
// it stops the exchange with a *ledger.DeadlineError.
func (timeExtension) Reply(ctx context.Context, r io.Reader, n uint32) (stop, err error) {
	if n > specext.MaxPayload {
		return nil, fmt.Errorf("ledger: speculos simulator: a %d-byte extension frame, more than %d: %w", n, specext.MaxPayload, signer.ErrProtocol)
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(r, p); err != nil {
		return nil, err
	}
	e, err := specext.ParseReply(p)
	if err != nil {
		return nil, fmt.Errorf("ledger: speculos simulator: %w: %v", signer.ErrProtocol, err)
	}
	trace := signertrace.ContextTrace(ctx)
	var accounted time.Duration
	for _, s := range e.Stages {
		if !s.Slept {
			simtime.Account(ctx, s.Duration)
		}
		trace.Report(s)
		accounted += s.Duration
	}
	if e.Exceeded {
		return &ledger.DeadlineError{Modeled: e.Modeled, Accounted: accounted}, nil
	}
	return nil, nil
}
