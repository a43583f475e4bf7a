package guard

import (
	"context"
	"fmt"

	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// A Request is one vote, proposal or vote extension to sign, parsed once:
// its fields and its sign bytes, which agree because only the Guard makes
// a Request (Guard.NewRequest from the fields, Guard.ParseRequest from the
// bytes). It carries the chain, phase and height/round/step from a node's
// request to the Guard's rules and on to the key (RequestSigner), so that
// nothing on the way parses the bytes again or reads them from a context.
type Request struct {
	m     signbytes.Message
	msg   []byte
	trace *signertrace.Trace
}

// ReportTo has the Guard report its own stage of r, the durable state
// write (signertrace.StageState), to t rather than to the context's Trace.
// A RequestSigner calls it from SignGuarded to file the write beside its
// own stages.
func (r *Request) ReportTo(t *signertrace.Trace) { r.trace = t }

// stateTrace is where r's state write is reported: the Trace ReportTo
// set, or the context's (nil when neither: reports then cost nothing).
func (r *Request) stateTrace(ctx context.Context) *signertrace.Trace {
	if r.trace != nil {
		return r.trace
	}
	return signertrace.ContextTrace(ctx)
}

// Message returns the request's fields.
func (r *Request) Message() signbytes.Message { return r.m }

// SignBytes returns the request's sign bytes. They are the caller's for a
// parsed Request: they must not change until the sign returns.
func (r *Request) SignBytes() []byte { return r.msg }

// A RequestSigner is a key that is told what it signs. A Guard whose key
// has it calls SignGuarded, instead of SignContext, once its rules allow
// r; SignGuarded signs r.SignBytes(). The daemon's backends use it to
// file each sign under its chain and phase.
type RequestSigner interface {
	SignGuarded(ctx context.Context, r *Request) ([]byte, error)
}

// NewRequest encodes m, a vote, proposal or vote extension the caller
// holds as fields (such as one decoded from a node's request), in its one
// dialect, m.Format, which the Guard must accept.
func (g *Guard) NewRequest(m signbytes.Message) (Request, error) {
	if m.Format != signbytes.TM2 && m.Format != signbytes.CometBFT || m.Format&g.formats == 0 {
		return Request{}, fmt.Errorf("guard: sign-bytes dialect %v: one accepted dialect is needed: %w", m.Format, signer.ErrInvalidMessage)
	}
	msg, err := m.Bytes()
	if err != nil {
		return Request{}, fmt.Errorf("guard: %w", err)
	}
	return Request{m: m, msg: msg}, nil
}

// ParseRequest parses msg, sign bytes in one of the dialects the Guard
// accepts. The Request holds msg, not a copy.
func (g *Guard) ParseRequest(msg []byte) (Request, error) {
	m, err := signbytes.ParseFormat(msg, g.formats)
	if err != nil {
		return Request{}, fmt.Errorf("guard: %w", err)
	}
	return Request{m: m, msg: msg}, nil
}

// SignRequest applies the rules of SignBytes to r and signs it or
// refuses.
func (g *Guard) SignRequest(ctx context.Context, r *Request) (Signed, error) {
	if err := g.usable(ctx); err != nil {
		return Signed{}, err
	}
	return g.sign(ctx, r)
}

// signKey has the key sign r: through SignGuarded where it has it.
func (g *Guard) signKey(ctx context.Context, r *Request) ([]byte, error) {
	if g.rs != nil {
		return g.rs.SignGuarded(ctx, r)
	}
	return g.s.SignContext(ctx, r.msg)
}
