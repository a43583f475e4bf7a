// Package simtime is the time plumbing the simulated devices share
// (ledger/ledgersim, yubihsm/yubihsmsim): whether a device's modeled time
// is slept or only accounted, how it reaches the caller's signertrace.Trace, and
// an injectable clock for the devices' own timers.
//
// By default a simulator only accounts its latency profile: it reports each
// component as a signertrace.Modeled stage and returns at once, so a benchmark
// of a 580 ms Ledger sign runs in microseconds and still reports 580
// modeled milliseconds (e2e-ms/op). With SIGNERKIT_SIM=realtime it also
// sleeps, for tests of timeouts and of code that must wait for real.
package simtime

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/signerkit/signerkit/signer/signertrace"
)

// Mode says what a simulator does with its modeled time.
type Mode uint8

const (
	// Accounted reports modeled time through the trace and does not wait.
	Accounted Mode = iota
	// Realtime reports modeled time and also sleeps it (ctx-aware).
	Realtime
)

// String returns "accounted" or "realtime".
func (m Mode) String() string {
	if m == Realtime {
		return "realtime"
	}
	return "accounted"
}

// EnvVar is the environment variable that selects the default Mode.
const EnvVar = "SIGNERKIT_SIM"

// ModeFromEnv returns Realtime when SIGNERKIT_SIM=realtime, else Accounted.
func ModeFromEnv() Mode {
	if strings.EqualFold(strings.TrimSpace(os.Getenv(EnvVar)), "realtime") {
		return Realtime
	}
	return Accounted
}

// Spend spends d of modeled time in stage s, from the named profile: it
// reports the stage to ctx's trace and, in Realtime mode, sleeps d or until
// ctx ends, returning ctx's error in that case. A zero or negative d does
// nothing.
//
// In Accounted mode a deadline on ctx still holds, in modeled time: the
// modeled time accounted under ctx so far (by every Spend with ctx or a
// context that shares its Done channel, such as a value context derived
// from it) is added to the wall clock. A stage that would run past the
// deadline is accounted only up to it, reported to the trace at that
// length, and Spend returns an error wrapping context.DeadlineExceeded,
// at once: a fake device times out as a slow real one would, without
// sleeping. Modeled time under one context adds up, as if the device did
// the work of concurrent calls one after another.
func Spend(ctx context.Context, m Mode, s signertrace.Stage, d time.Duration, profile string) error {
	if d <= 0 {
		return ctx.Err()
	}
	tr := signertrace.ContextTrace(ctx)
	if m != Realtime {
		return account(ctx, tr, s, d, profile)
	}
	if err := Sleep(ctx, d); err != nil {
		return err
	}
	tr.Modeled(s, d, true, profile)
	return nil
}

// account is Spend in Accounted mode.
func account(ctx context.Context, tr *signertrace.Trace, s signertrace.Stage, d time.Duration, profile string) error {
	deadline, ok := ctx.Deadline()
	if !ok {
		tr.Modeled(s, d, false, profile)
		return ctx.Err()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	b := budgetOf(ctx)
	var before time.Duration
	if b != nil {
		b.mu.Lock()
		before = b.spent
	}
	left := time.Until(deadline) - before
	part := d
	if d > left {
		part = max(left, 0)
	}
	if b != nil {
		b.spent += part
		b.mu.Unlock()
	}
	if part > 0 {
		tr.Modeled(s, part, false, profile)
	}
	if part < d {
		return &DeadlineError{Stage: s, Modeled: d, Accounted: part, Before: before}
	}
	return nil
}

// DeadlineError is what Spend returns in Accounted mode when a stage's
// modeled time would run past the context's deadline. It unwraps to
// context.DeadlineExceeded.
type DeadlineError struct {
	// Stage is the stage that ran out of time.
	Stage signertrace.Stage
	// Modeled is the stage's full modeled duration, and Accounted the
	// part of it accounted before the deadline.
	Modeled, Accounted time.Duration
	// Before is the modeled time accounted under the context before
	// this stage.
	Before time.Duration
}

func (e *DeadlineError) Error() string {
	return fmt.Sprintf("simtime: %v of modeled %s time after %v already modeled: %v of it before the deadline: %v",
		e.Modeled, e.Stage, e.Before, e.Accounted, context.DeadlineExceeded)
}

// Unwrap returns context.DeadlineExceeded.
func (e *DeadlineError) Unwrap() error { return context.DeadlineExceeded }

// budget is the modeled time accounted under one context.
type budget struct {
	mu    sync.Mutex
	spent time.Duration
}

// budgets maps a context's Done channel to its *budget, until the
// context ends.
var budgets sync.Map

// budgetOf returns the budget of ctx (by its Done channel), or nil if ctx
// has no Done channel.
func budgetOf(ctx context.Context) *budget {
	done := ctx.Done()
	if done == nil {
		return nil
	}
	if b, ok := budgets.Load(done); ok {
		return b.(*budget)
	}
	b, loaded := budgets.LoadOrStore(done, new(budget))
	if !loaded {
		context.AfterFunc(ctx, func() { budgets.Delete(done) })
	}
	return b.(*budget)
}

// Account adds d of modeled time to ctx's budget, the one Spend keeps in
// Accounted mode, if ctx has a deadline and d is positive. It is for the
// client of a simulator that answers from another goroutine or process
// (yubihsm's connector client, ledger's Speculos client), which tells the
// simulator the time its caller's deadline leaves and accounts the modeled
// time each answer reports: that time has passed for the caller in modeled
// time, so it counts against the deadline of what comes next under ctx.
func Account(ctx context.Context, d time.Duration) {
	if _, ok := ctx.Deadline(); !ok || d <= 0 {
		return
	}
	if b := budgetOf(ctx); b != nil {
		b.mu.Lock()
		b.spent += d
		b.mu.Unlock()
	}
}

// AccountedUnder returns the modeled time Spend (in Accounted mode) and
// Account have accounted under ctx's deadline so far (zero for a context
// without a deadline, or once it has ended).
func AccountedUnder(ctx context.Context) time.Duration {
	done := ctx.Done()
	if done == nil {
		return 0
	}
	b, ok := budgets.Load(done)
	if !ok {
		return 0
	}
	bb := b.(*budget)
	bb.mu.Lock()
	defer bb.mu.Unlock()
	return bb.spent
}

// Sleep waits d or until ctx ends, whichever is first, and returns ctx's
// error if it ended.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Clock is the time source of a simulator's own timers (session idle
// expiry, say), so tests can move time on without waiting.
type Clock interface {
	Now() time.Time
}

// System is the wall clock.
var System Clock = systemClock{}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// Manual is a Clock that moves only when told. The zero value starts at
// the Unix epoch; it is safe for concurrent use.
type Manual struct {
	mu  sync.Mutex
	now time.Time
}

// NewManual returns a Manual clock reading start.
func NewManual(start time.Time) *Manual { return &Manual{now: start} }

// Now returns the clock's time.
func (c *Manual) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.now.IsZero() {
		return time.Unix(0, 0)
	}
	return c.now
}

// Advance moves the clock on by d.
func (c *Manual) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.now.IsZero() {
		c.now = time.Unix(0, 0)
	}
	c.now = c.now.Add(d)
}

// Header is the HTTP response header through which a simulator behind a
// network face (the YubiHSM connector) tells its client, which holds the
// caller's trace, what modeled time the request cost. Real devices never
// send it, and anything that answers at a connector URL can: only the
// simulator's own client (yubihsmsim.HTTPClient) reads it, only on a
// successful response, and only within the limits Decode enforces.
const Header = "X-Signerkit-Modeled"

// Encode renders modeled stages for Header: "device=131000000ns;slept=1;
// profile=…" entries joined by ", ". Profiles must not contain ',' or ';'.
func Encode(stages []signertrace.StageInfo) string {
	var b strings.Builder
	for i, s := range stages {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s=%d", s.Stage, int64(s.Duration))
		if s.Slept {
			b.WriteString(";slept")
		}
		if s.Profile != "" {
			b.WriteString(";profile=")
			b.WriteString(s.Profile)
		}
	}
	return b.String()
}

// Limits of a Header value that Decode accepts. A simulator's response
// carries one to three stages with a profile name of a few dozen bytes and
// durations of milliseconds to seconds; anything beyond these bounds did
// not come from one and is refused whole, before it is split.
const (
	// MaxHeaderLen is the longest Header value Decode parses, in bytes.
	MaxHeaderLen = 2048
	// MaxEntries is the most stages one Header value may carry.
	MaxEntries = 8
	// MaxEntryLen is the longest one entry (a stage, its duration and
	// attributes) may be, in bytes.
	MaxEntryLen = 256
	// MaxStageDuration is the longest modeled duration one entry may
	// report.
	MaxStageDuration = 10 * time.Minute
)

// Decode parses a Header value written by Encode. Every stage it returns
// is signertrace.Modeled. It refuses, at a cost bounded by MaxHeaderLen, a
// value longer than MaxHeaderLen, with more than MaxEntries entries, an
// entry longer than MaxEntryLen or a duration above MaxStageDuration.
func Decode(v string) ([]signertrace.StageInfo, error) {
	if len(v) > MaxHeaderLen {
		return nil, fmt.Errorf("simtime: %d-byte header, the most is %d", len(v), MaxHeaderLen)
	}
	v = strings.TrimSpace(v)
	if v == "" {
		return nil, nil
	}
	if n := strings.Count(v, ",") + 1; n > MaxEntries {
		return nil, fmt.Errorf("simtime: %d entries, the most is %d", n, MaxEntries)
	}
	var out []signertrace.StageInfo
	for _, entry := range strings.Split(v, ",") {
		if len(entry) > MaxEntryLen {
			return nil, fmt.Errorf("simtime: %d-byte entry, the most is %d", len(entry), MaxEntryLen)
		}
		parts := strings.Split(strings.TrimSpace(entry), ";")
		name, val, ok := strings.Cut(parts[0], "=")
		if !ok {
			return nil, fmt.Errorf("simtime: bad entry %q", entry)
		}
		st, ok := stageByName(name)
		if !ok {
			return nil, fmt.Errorf("simtime: unknown stage %q", name)
		}
		ns, err := strconv.ParseInt(val, 10, 64)
		if err != nil || ns < 0 {
			return nil, fmt.Errorf("simtime: bad duration in %q", entry)
		}
		if time.Duration(ns) > MaxStageDuration {
			return nil, fmt.Errorf("simtime: duration %dns exceeds %v", ns, MaxStageDuration)
		}
		info := signertrace.StageInfo{Stage: st, Duration: time.Duration(ns), Source: signertrace.Modeled}
		for _, p := range parts[1:] {
			switch {
			case p == "slept":
				info.Slept = true
			case strings.HasPrefix(p, "profile="):
				info.Profile = strings.TrimPrefix(p, "profile=")
			default:
				return nil, fmt.Errorf("simtime: bad attribute %q", p)
			}
		}
		out = append(out, info)
	}
	return out, nil
}

func stageByName(name string) (signertrace.Stage, bool) {
	for _, s := range signertrace.Stages() {
		if s.String() == name {
			return s, true
		}
	}
	return 0, false
}
