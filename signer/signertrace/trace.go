package signertrace

import (
	"context"
	"fmt"
	"time"
)

// Stage is one part of a sign whose time a backend reports. The stages of
// one call do not overlap, with one exception: a simulated device that
// sleeps its modeled time (StageInfo.Slept) does so inside a stage the host
// measures — the transport, usually — and says which in StageInfo.Within.
// Summary.Exclusive takes slept time out of the stage that contains it.
type Stage uint8

// The stages of a sign, in the order they usually happen.
const (
	// StageKDF: deriving a key from a passphrase (bcrypt, PBKDF2) to
	// decrypt or authenticate.
	StageKDF Stage = iota + 1
	// StageSession: opening, authenticating or checking out a session
	// (SCP03, PKCS#11 login), when it happens during the call.
	StageSession
	// StageTransport: host-side time in the transport (an APDU exchange, an
	// HTTP round trip), from the first byte written to the last one read.
	// It includes what the host cannot see apart — wire and device time on
	// a real device — and modeled time a simulator slept in it; it
	// excludes a stall the backend itself measures and reports apart.
	StageTransport
	// StageStall: time the host waits on purpose (a fixed sleep in a
	// driver, such as zondax/ledger-go's 50 ms before every APDU).
	StageStall
	// StageWire: time on the wire or bus (USB frames), usually modeled.
	StageWire
	// StageConfirm: time the device waits for its user to approve (the
	// Ledger validator app's first sign).
	StageConfirm
	// StageDevice: time the device computes (on-device signing).
	StageDevice
	// StageSign: signing on the host CPU.
	StageSign
	// StageState: the double-sign guard's durable write of the signed
	// step (package guard: the record written and fdatasync'd) after the
	// key signed. It is not a backend's stage: the guard reports it, to a
	// Trace a guard.RequestSigner gave the request or else the context's.
	StageState

	numStages = iota + 1
)

var stageNames = [numStages]string{"", "kdf", "session", "transport", "stall", "wire", "confirm", "device", "sign", "state"}

// Stages lists every stage in order.
func Stages() []Stage {
	return []Stage{StageKDF, StageSession, StageTransport, StageStall, StageWire, StageConfirm, StageDevice, StageSign, StageState}
}

// String returns the stage's name as used in metric units ("kdf",
// "transport", …).
func (s Stage) String() string {
	if s.valid() {
		return stageNames[s]
	}
	return fmt.Sprintf("Stage(%d)", uint8(s))
}

func (s Stage) valid() bool { return s >= StageKDF && s < numStages }

// Source says where a stage's duration came from.
type Source uint8

const (
	// Measured durations were read from the host's monotonic clock.
	Measured Source = iota
	// Modeled durations come from a simulator's latency profile (named in
	// StageInfo.Profile), not from a clock.
	Modeled
)

// String returns "measured" or "modeled".
func (s Source) String() string {
	switch s {
	case Measured:
		return "measured"
	case Modeled:
		return "modeled"
	}
	return fmt.Sprintf("Source(%d)", uint8(s))
}

// StageInfo describes one stage of one sign.
type StageInfo struct {
	Stage    Stage
	Duration time.Duration
	Source   Source
	// Slept is set on a Modeled stage when the simulator also slept for
	// Duration, so the time passed for real inside the measured stage
	// Within. A Modeled stage that was not slept was only accounted: it
	// adds to the wall-clock time of the call to give the end-to-end
	// latency.
	Slept bool
	// Within names the measured stage that a slept Modeled stage passed
	// inside; zero means StageTransport, where simulators sit.
	Within Stage
	// Profile names the latency profile a Modeled duration comes from and
	// that profile's source, e.g. "nanosplus (docs/latency-profiles.md §1)".
	Profile string
}

// Counter is a quantity counted during a sign.
type Counter uint8

// The counters a backend may report.
const (
	// CountAPDUs: APDUs exchanged with a smartcard-style device.
	CountAPDUs Counter = iota + 1
	// CountHIDReports: USB HID reports written and read.
	CountHIDReports
	// CountBytesOut: bytes sent to the device or peer, with framing.
	CountBytesOut
	// CountBytesIn: bytes received from the device or peer, with framing.
	CountBytesIn
	// CountRoundTrips: request/response round trips (HTTP requests,
	// PKCS#11 calls that reach the token, APDU exchanges).
	CountRoundTrips
	// CountRetries: operations retried after a recoverable failure (a
	// dead session replaced, an expired channel re-established).
	CountRetries

	numCounters = iota + 1
)

var counterNames = [numCounters]string{"", "apdus", "hid-reports", "bytes-out", "bytes-in", "round-trips", "retries"}

// Counters lists every counter in order.
func Counters() []Counter {
	return []Counter{CountAPDUs, CountHIDReports, CountBytesOut, CountBytesIn, CountRoundTrips, CountRetries}
}

// String returns the counter's name as used in metric units ("apdus", …).
func (c Counter) String() string {
	if c.valid() {
		return counterNames[c]
	}
	return fmt.Sprintf("Counter(%d)", uint8(c))
}

func (c Counter) valid() bool { return c >= CountAPDUs && c < numCounters }

// Trace is a set of hooks through which a backend reports what one sign
// spent its time on, in the manner of net/http/httptrace. Attach one to a
// context with WithTrace; any hook may be nil. Hooks are called
// synchronously from the signing goroutine (or from the goroutine of a
// simulated device) and must be safe for concurrent use when the same
// Trace is attached to concurrent calls.
//
// Backends report through the methods below, which cost next to nothing
// when no Trace is attached: they are safe to call on a nil *Trace, and
// Start reads no clock then.
type Trace struct {
	// StageDone is called when a stage ends.
	StageDone func(StageInfo)
	// Count is called when a counter grows by n.
	Count func(c Counter, n int64)
}

type traceKey struct{}

// traced is what a context carries: the Trace backends report to, which
// composes every Trace attached, and those Traces themselves.
type traced struct {
	trace *Trace
	parts []*Trace
}

// WithTrace returns a context that carries t. If ctx already carries a
// Trace, both receive every report, t's hooks first; if it already carries
// t itself, ctx is returned as it is, so nothing is counted twice. (A Trace
// taken with ContextTrace from another context and attached to one that
// carries part of it is not recognised, and that part counts twice.)
func WithTrace(ctx context.Context, t *Trace) context.Context {
	if t == nil {
		return ctx
	}
	old, _ := ctx.Value(traceKey{}).(*traced)
	if old == nil {
		return context.WithValue(ctx, traceKey{}, &traced{trace: t, parts: []*Trace{t}})
	}
	if t == old.trace {
		return ctx // the Trace ContextTrace returned, attached again
	}
	for _, p := range old.parts {
		if p == t {
			return ctx
		}
	}
	parts := append([]*Trace{t}, old.parts...)
	return context.WithValue(ctx, traceKey{}, &traced{trace: compose(t, old.trace), parts: parts})
}

// ContextTrace returns the Trace carried by ctx, or nil.
func ContextTrace(ctx context.Context) *Trace {
	if t, _ := ctx.Value(traceKey{}).(*traced); t != nil {
		return t.trace
	}
	return nil
}

func compose(first, second *Trace) *Trace {
	out := &Trace{StageDone: first.StageDone, Count: first.Count}
	if a, b := first.StageDone, second.StageDone; a != nil && b != nil {
		out.StageDone = func(i StageInfo) { a(i); b(i) }
	} else if a == nil {
		out.StageDone = b
	}
	if a, b := first.Count, second.Count; a != nil && b != nil {
		out.Count = func(c Counter, n int64) { a(c, n); b(c, n) }
	} else if a == nil {
		out.Count = b
	}
	return out
}

// Start returns the time at which a measured stage begins, for a later
// call to Measured. With no StageDone hook it returns the zero Time without
// reading the clock.
func (t *Trace) Start() time.Time {
	if t == nil || t.StageDone == nil {
		return time.Time{}
	}
	return time.Now()
}

// Measured reports a measured stage that began at start (from Start) and
// ends now.
func (t *Trace) Measured(s Stage, start time.Time) {
	if t == nil || t.StageDone == nil || start.IsZero() {
		return
	}
	t.StageDone(StageInfo{Stage: s, Duration: time.Since(start), Source: Measured})
}

// MeasuredDuration reports a measured stage whose duration the caller
// took itself.
func (t *Trace) MeasuredDuration(s Stage, d time.Duration) {
	if t == nil || t.StageDone == nil {
		return
	}
	t.StageDone(StageInfo{Stage: s, Duration: d, Source: Measured})
}

// Modeled reports a stage whose duration d comes from the latency profile
// named by profile; slept says whether the simulator also slept for d,
// inside the transport. Use Report for time slept inside another stage.
func (t *Trace) Modeled(s Stage, d time.Duration, slept bool, profile string) {
	t.Report(StageInfo{Stage: s, Duration: d, Source: Modeled, Slept: slept, Profile: profile})
}

// Report reports a stage described in full, such as modeled time slept
// Within the session stage.
func (t *Trace) Report(i StageInfo) {
	if t == nil || t.StageDone == nil {
		return
	}
	t.StageDone(i)
}

// Add reports that counter c grew by n.
func (t *Trace) Add(c Counter, n int64) {
	if t == nil || t.Count == nil {
		return
	}
	t.Count(c, n)
}
