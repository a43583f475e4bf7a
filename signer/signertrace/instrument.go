package signertrace

import (
	"context"
	"crypto"
	"io"
	"sync/atomic"
	"time"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signerstats"
)

type labelKey struct{}

// WithLabel returns a context whose signs an Instrumented signer files
// under label, for instance "proposal", "prevote" or "precommit".
func WithLabel(ctx context.Context, label string) context.Context {
	return context.WithValue(ctx, labelKey{}, label)
}

// LabelFrom returns the label set by WithLabel, or "".
func LabelFrom(ctx context.Context) string {
	l, _ := ctx.Value(labelKey{}).(string)
	return l
}

// DefaultLabel files signs that carry no label: Sign calls, and SignContext
// calls whose context has none.
const DefaultLabel = "sign"

// Instrumented wraps a Signer and keeps latency statistics per label —
// count, errors, total, min, max, p50, p90, p99 — the per-phase figures a
// validator operator otherwise pieces together from log timestamps.
//
// The latency of a SignContext call is its wall-clock time plus any modeled
// time a simulated device accounted without sleeping (see
// Summary.EndToEnd), so a run against a simulator reports what the device
// would have taken; a Sign call, which carries no context, is wall-clock
// time only. Failed signs are counted as errors and kept out of the latency
// figures.
//
// Instrumented is safe for concurrent use if the wrapped Signer is; its own
// bookkeeping takes a short lock per sign.
type Instrumented struct {
	s     signer.Signer
	stats signerstats.Recorder
}

var _ signer.Signer = (*Instrumented)(nil)

// Instrument wraps s.
func Instrument(s signer.Signer) *Instrumented {
	m := &Instrumented{s: s}
	m.stats.Start(time.Now())
	return m
}

// Unwrap returns the wrapped Signer.
func (m *Instrumented) Unwrap() signer.Signer { return m.s }

// Public returns the wrapped signer's public key.
func (m *Instrumented) Public() crypto.PublicKey { return m.s.Public() }

// Close closes the wrapped signer. The statistics stay readable.
func (m *Instrumented) Close() error { return m.s.Close() }

// Sign signs through the wrapped signer and files the call under
// DefaultLabel.
func (m *Instrumented) Sign(rand io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	start := time.Now()
	sig, err := m.s.Sign(rand, digest, opts)
	m.record(DefaultLabel, time.Since(start), err)
	return sig, err
}

// SignContext signs through the wrapped signer and files the call under
// the context's label (see WithLabel).
func (m *Instrumented) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	label := LabelFrom(ctx)
	if label == "" {
		label = DefaultLabel
	}
	var acct accounted
	ctx = WithTrace(ctx, &Trace{StageDone: acct.stageDone})
	start := time.Now()
	sig, err := m.s.SignContext(ctx, msg)
	m.record(label, time.Since(start)+time.Duration(acct.ns.Load()), err)
	return sig, err
}

// accounted sums modeled time that was not slept.
type accounted struct{ ns atomic.Int64 }

func (a *accounted) stageDone(i StageInfo) {
	if i.Source == Modeled && !i.Slept && i.Duration > 0 {
		a.ns.Add(int64(i.Duration))
	}
}

func (m *Instrumented) record(label string, d time.Duration, err error) {
	m.stats.Record(label, d, err)
}

// Reset clears the statistics.
func (m *Instrumented) Reset() { m.stats.Reset() }

// Snapshot returns the statistics so far, one entry per label, sorted by
// label.
func (m *Instrumented) Snapshot() signerstats.Snapshot { return m.stats.Snapshot() }

var _ crypto.MessageSigner = (*Instrumented)(nil)

// SignMessage implements crypto.MessageSigner (see signer.SignMessage); it
// is instrumented as SignContext is.
func (m *Instrumented) SignMessage(_ io.Reader, msg []byte, opts crypto.SignerOpts) ([]byte, error) {
	return signer.SignMessage(m, msg, opts)
}
