package signertrace

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Collector sums the stages and counters that backends report through its
// Trace: attach it to one call to see where that call's time went, or to
// many and divide by their number. The zero Collector is empty and ready
// to use. It is safe for concurrent use.
type Collector struct {
	once  sync.Once
	trace Trace
	mu    sync.Mutex
	sum   Summary
}

// NewCollector returns an empty Collector.
func NewCollector() *Collector { return &Collector{} }

// Trace returns the hooks that feed c; every call returns the same Trace.
func (c *Collector) Trace() *Trace {
	c.once.Do(func() { c.trace = Trace{StageDone: c.stageDone, Count: c.count} })
	return &c.trace
}

// WithContext returns a context that carries c's Trace (and any Trace ctx
// carried already; attaching c twice does not count twice).
func (c *Collector) WithContext(ctx context.Context) context.Context {
	return WithTrace(ctx, c.Trace())
}

// Summary returns what c has collected so far.
func (c *Collector) Summary() Summary {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sum
}

// Reset empties c.
func (c *Collector) Reset() {
	c.mu.Lock()
	c.sum = Summary{}
	c.mu.Unlock()
}

func (c *Collector) stageDone(i StageInfo) {
	c.mu.Lock()
	c.sum.add(i)
	c.mu.Unlock()
}

func (c *Collector) count(k Counter, n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !k.valid() || n < 0 {
		c.sum.invalid++
		return
	}
	c.sum.counts[k] = satAdd(c.sum.counts[k], n)
}

// satAdd returns a+b for a non-negative b, or math.MaxInt64 when the
// sum would overflow: a Collector's totals stop at the largest value
// rather than wrap negative, however large the reports (a simulator's
// modeled time comes from outside the process).
func satAdd[T ~int64](a, b T) T {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// StageTotal is what one stage added up to.
type StageTotal struct {
	Measured time.Duration // clock-measured time
	Modeled  time.Duration // time from latency profiles, slept or not
	Slept    time.Duration // the part of Modeled that was also slept
	Contains time.Duration // modeled time of other stages slept inside this one
	Reports  int           // how many times the stage was reported
	Profile  string        // the profile of the first Modeled report, if any
}

// Total returns the stage's measured plus modeled time. Like every total
// of a Collector it saturates at the largest Duration rather than
// overflow.
func (t StageTotal) Total() time.Duration { return satAdd(t.Measured, t.Modeled) }

// Summary is the sum of the stages and counters of one or more calls.
// The zero Summary is empty.
type Summary struct {
	stages  [numStages]StageTotal
	counts  [numCounters]int64
	invalid int
}

func (s *Summary) add(i StageInfo) {
	within := i.Within
	if within == 0 {
		within = StageTransport
	}
	if !i.Stage.valid() || i.Duration < 0 || i.Source > Modeled || (i.Slept && !within.valid()) {
		s.invalid++
		return
	}
	t := &s.stages[i.Stage]
	t.Reports++
	if i.Source == Measured {
		t.Measured = satAdd(t.Measured, i.Duration)
		return
	}
	t.Modeled = satAdd(t.Modeled, i.Duration)
	if i.Slept {
		t.Slept = satAdd(t.Slept, i.Duration)
		s.stages[within].Contains = satAdd(s.stages[within].Contains, i.Duration)
	}
	if t.Profile == "" {
		t.Profile = i.Profile
	}
}

// Stage returns the totals of stage st.
func (s Summary) Stage(st Stage) StageTotal {
	if !st.valid() {
		return StageTotal{}
	}
	return s.stages[st]
}

// Count returns the total of counter c.
func (s Summary) Count(c Counter) int64 {
	if !c.valid() {
		return 0
	}
	return s.counts[c]
}

// Invalid returns how many reports were dropped: stages of an unknown
// stage or source, with a negative duration or slept within an unknown
// stage, and counters that are unknown or went down.
func (s Summary) Invalid() int { return s.invalid }

// Measured returns the sum of all measured stages.
func (s Summary) Measured() time.Duration {
	var d time.Duration
	for _, t := range s.stages {
		d = satAdd(d, t.Measured)
	}
	return d
}

// Modeled returns the sum of all modeled stages, slept or not.
func (s Summary) Modeled() time.Duration {
	var d time.Duration
	for _, t := range s.stages {
		d = satAdd(d, t.Modeled)
	}
	return d
}

// Slept returns the modeled time that simulators also slept.
func (s Summary) Slept() time.Duration {
	var d time.Duration
	for _, t := range s.stages {
		d = satAdd(d, t.Slept)
	}
	return d
}

// Accounted returns the modeled time that was not slept: time a real device
// would have taken that the wall clock did not see.
func (s Summary) Accounted() time.Duration {
	var d time.Duration
	for _, t := range s.stages {
		d = satAdd(d, max(t.Modeled-t.Slept, 0))
	}
	return d
}

// EndToEnd returns the latency a caller of a real device would see for
// calls whose wall-clock time was wall: wall plus the modeled time that was
// only accounted.
func (s Summary) EndToEnd(wall time.Duration) time.Duration {
	return satAdd(wall, s.Accounted())
}

// Exclusive returns the time that belongs to stage st alone: its measured
// plus modeled time, less the modeled time of other stages that simulators
// slept inside it (see StageInfo.Within). The exclusive times of all stages
// of a call add up to no more than its end-to-end latency.
func (s Summary) Exclusive(st Stage) time.Duration {
	t := s.Stage(st)
	return max(t.Total()-t.Contains, 0)
}

// Dominant returns the stage with the largest exclusive time, or 0 when
// nothing was reported.
func (s Summary) Dominant() Stage {
	var best Stage
	var most time.Duration
	for _, st := range Stages() {
		if d := s.Exclusive(st); d > most {
			best, most = st, d
		}
	}
	return best
}

// String lists the stages and counters that were reported, e.g.
// "transport=0.41ms device=526ms(modeled) apdus=1".
func (s Summary) String() string {
	var b strings.Builder
	for _, st := range Stages() {
		t := s.stages[st]
		if t.Reports == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=", st)
		switch {
		case t.Modeled == 0:
			b.WriteString(fmtMillis(t.Measured))
		case t.Measured == 0:
			fmt.Fprintf(&b, "%s(modeled)", fmtMillis(t.Modeled))
		default:
			fmt.Fprintf(&b, "%s+%s(modeled)", fmtMillis(t.Measured), fmtMillis(t.Modeled))
		}
	}
	for _, c := range Counters() {
		if n := s.counts[c]; n != 0 {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "%s=%d", c, n)
		}
	}
	return b.String()
}

// fmtMillis formats d in milliseconds in fixed point: four decimals below
// 0.1 ms, three below 1 ms, two below 10 ms, one below 100 ms and none
// above ("0.0312ms", "3.18ms", "526ms", "4012ms").
func fmtMillis(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	prec := 0
	switch {
	case ms == 0:
	case ms < 0.1:
		prec = 4
	case ms < 1:
		prec = 3
	case ms < 10:
		prec = 2
	case ms < 100:
		prec = 1
	}
	return strconv.FormatFloat(ms, 'f', prec, 64) + "ms"
}
