package signertrace_test

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signer/signertrace"
)

func TestNilTraceIsSafe(t *testing.T) {
	var tr *signertrace.Trace
	if !tr.Start().IsZero() {
		t.Error("Start on a nil Trace read the clock")
	}
	tr.Measured(signertrace.StageSign, time.Now())
	tr.MeasuredDuration(signertrace.StageSign, time.Millisecond)
	tr.Modeled(signertrace.StageDevice, time.Millisecond, false, "p")
	tr.Add(signertrace.CountAPDUs, 1)
	if signertrace.ContextTrace(context.Background()) != nil {
		t.Error("ContextTrace of a bare context is not nil")
	}
	if ctx := signertrace.WithTrace(context.Background(), nil); signertrace.ContextTrace(ctx) != nil {
		t.Error("WithTrace(nil) attached a Trace")
	}
	// A Trace with only a Count hook reads no clock either.
	tr = &signertrace.Trace{Count: func(signertrace.Counter, int64) {}}
	if !tr.Start().IsZero() {
		t.Error("Start without a StageDone hook read the clock")
	}
}

func TestWithTraceComposes(t *testing.T) {
	var order []string
	outer := &signertrace.Trace{
		StageDone: func(i signertrace.StageInfo) { order = append(order, "outer:"+i.Stage.String()) },
		Count:     func(c signertrace.Counter, n int64) { order = append(order, "outer:"+c.String()) },
	}
	inner := &signertrace.Trace{StageDone: func(i signertrace.StageInfo) { order = append(order, "inner:"+i.Stage.String()) }}
	ctx := signertrace.WithTrace(signertrace.WithTrace(context.Background(), outer), inner)
	tr := signertrace.ContextTrace(ctx)
	tr.MeasuredDuration(signertrace.StageKDF, time.Millisecond)
	tr.Add(signertrace.CountAPDUs, 2)
	got := strings.Join(order, " ")
	if want := "inner:kdf outer:kdf outer:apdus"; got != want {
		t.Errorf("hooks ran as %q, want %q", got, want)
	}
}

func TestTraceReportsSourceAndProfile(t *testing.T) {
	var got []signertrace.StageInfo
	tr := &signertrace.Trace{StageDone: func(i signertrace.StageInfo) { got = append(got, i) }}
	start := tr.Start()
	if start.IsZero() {
		t.Fatal("Start with a hook returned the zero time")
	}
	tr.Measured(signertrace.StageTransport, start)
	tr.Modeled(signertrace.StageDevice, 526*time.Millisecond, true, "nanosplus (docs/latency-profiles.md §1)")
	tr.Measured(signertrace.StageSign, time.Time{}) // a zero start is ignored
	if len(got) != 2 {
		t.Fatalf("got %d reports, want 2: %+v", len(got), got)
	}
	if got[0].Source != signertrace.Measured || got[0].Duration < 0 || got[0].Slept || got[0].Profile != "" {
		t.Errorf("measured report = %+v", got[0])
	}
	if got[1] != (signertrace.StageInfo{Stage: signertrace.StageDevice, Duration: 526 * time.Millisecond, Source: signertrace.Modeled, Slept: true, Profile: "nanosplus (docs/latency-profiles.md §1)"}) {
		t.Errorf("modeled report = %+v", got[1])
	}
}

func TestNames(t *testing.T) {
	var names []string
	for _, s := range signertrace.Stages() {
		names = append(names, s.String())
	}
	if got, want := strings.Join(names, ","), "kdf,session,transport,stall,wire,confirm,device,sign,state"; got != want {
		t.Errorf("stages = %s, want %s", got, want)
	}
	names = names[:0]
	for _, c := range signertrace.Counters() {
		names = append(names, c.String())
	}
	if got, want := strings.Join(names, ","), "apdus,hid-reports,bytes-out,bytes-in,round-trips,retries"; got != want {
		t.Errorf("counters = %s, want %s", got, want)
	}
	if s := signertrace.Stage(0).String(); s != "Stage(0)" {
		t.Errorf("Stage(0) = %q", s)
	}
	if s := signertrace.Source(7).String(); s != "Source(7)" {
		t.Errorf("Source(7) = %q", s)
	}
}

func TestCollectorSums(t *testing.T) {
	c := signertrace.NewCollector()
	tr := signertrace.ContextTrace(c.WithContext(context.Background()))
	const prof = "nanosplus (docs/latency-profiles.md §1)"
	// One Ledger-like sign through a simulator that sleeps the wire time
	// and only accounts the device time.
	tr.MeasuredDuration(signertrace.StageTransport, 5*time.Millisecond) // contains 3 ms slept
	tr.Modeled(signertrace.StageWire, 3*time.Millisecond, true, prof)
	tr.Modeled(signertrace.StageDevice, 526*time.Millisecond, false, prof)
	tr.Modeled(signertrace.StageStall, 50*time.Millisecond, false, prof)
	tr.Add(signertrace.CountAPDUs, 1)
	tr.Add(signertrace.CountHIDReports, 4)
	tr.Add(signertrace.CountAPDUs, 1)
	// Reports a collector must drop, not sum.
	tr.MeasuredDuration(signertrace.Stage(99), time.Hour)
	tr.MeasuredDuration(signertrace.StageSign, -time.Second)
	tr.Add(signertrace.Counter(99), 5)
	tr.Add(signertrace.CountAPDUs, -1)

	s := c.Summary()
	if got := s.Invalid(); got != 4 {
		t.Errorf("Invalid() = %d, want 4", got)
	}
	if got := s.Stage(signertrace.StageWire); got != (signertrace.StageTotal{Modeled: 3 * time.Millisecond, Slept: 3 * time.Millisecond, Reports: 1, Profile: prof}) {
		t.Errorf("wire = %+v", got)
	}
	checks := []struct {
		name      string
		got, want time.Duration
	}{
		{"Measured", s.Measured(), 5 * time.Millisecond},
		{"Modeled", s.Modeled(), 579 * time.Millisecond},
		{"Slept", s.Slept(), 3 * time.Millisecond},
		{"Accounted", s.Accounted(), 576 * time.Millisecond},
		{"EndToEnd(6ms)", s.EndToEnd(6 * time.Millisecond), 582 * time.Millisecond},
		{"Exclusive(transport)", s.Exclusive(signertrace.StageTransport), 2 * time.Millisecond},
		{"Exclusive(device)", s.Exclusive(signertrace.StageDevice), 526 * time.Millisecond},
		{"Exclusive(kdf)", s.Exclusive(signertrace.StageKDF), 0},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v, want %v", ch.name, ch.got, ch.want)
		}
	}
	if got := s.Dominant(); got != signertrace.StageDevice {
		t.Errorf("Dominant() = %v, want device", got)
	}
	if got := s.Count(signertrace.CountAPDUs); got != 2 {
		t.Errorf("apdus = %d, want 2", got)
	}
	if got, want := s.String(), "transport=5.00ms stall=50.0ms(modeled) wire=3.00ms(modeled) device=526ms(modeled) apdus=2 hid-reports=4"; got != want {
		t.Errorf("String() = %q\nwant        %q", got, want)
	}
	c.Reset()
	if s := c.Summary(); s.Measured() != 0 || s.Modeled() != 0 || s.Count(signertrace.CountAPDUs) != 0 || s.Dominant() != 0 {
		t.Errorf("after Reset: %v", s)
	}
}

func TestCollectorConcurrent(t *testing.T) {
	c := signertrace.NewCollector()
	ctx := c.WithContext(context.Background())
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr := signertrace.ContextTrace(ctx)
			for range 1000 {
				tr.MeasuredDuration(signertrace.StageSign, time.Microsecond)
				tr.Add(signertrace.CountRoundTrips, 1)
			}
		}()
	}
	wg.Wait()
	s := c.Summary()
	if got := s.Stage(signertrace.StageSign); got.Measured != 8000*time.Microsecond || got.Reports != 8000 {
		t.Errorf("sign = %+v, want 8 ms in 8000 reports", got)
	}
	if got := s.Count(signertrace.CountRoundTrips); got != 8000 {
		t.Errorf("round trips = %d, want 8000", got)
	}
}

// BenchmarkTraceOverhead measures what a backend pays to report one
// measured stage: with no Trace in the context (the common case), with a
// Collector, and with an empty Trace.
func BenchmarkTraceOverhead(b *testing.B) {
	cases := []struct {
		name string
		ctx  context.Context
	}{
		{"hooks=none", context.Background()},
		{"hooks=empty", signertrace.WithTrace(context.Background(), &signertrace.Trace{})},
		{"hooks=collector", signertrace.NewCollector().WithContext(context.Background())},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tr := signertrace.ContextTrace(tc.ctx)
				start := tr.Start()
				tr.Measured(signertrace.StageSign, start)
				tr.Add(signertrace.CountRoundTrips, 1)
			}
		})
	}
}

func TestSleptWithinAnotherStage(t *testing.T) {
	var c signertrace.Collector // the zero value works
	tr := c.Trace()
	// A session set up during the call, whose modeled device time a
	// realtime simulator slept inside the measured session stage.
	tr.MeasuredDuration(signertrace.StageSession, 9*time.Millisecond)
	tr.StageDone(signertrace.StageInfo{Stage: signertrace.StageDevice, Duration: 7 * time.Millisecond, Source: signertrace.Modeled, Slept: true, Within: signertrace.StageSession, Profile: "p"})
	tr.MeasuredDuration(signertrace.StageTransport, 3*time.Millisecond)
	tr.Modeled(signertrace.StageWire, 2*time.Millisecond, true, "p") // within transport
	s := c.Summary()
	for st, want := range map[signertrace.Stage]time.Duration{
		signertrace.StageSession:   2 * time.Millisecond,
		signertrace.StageDevice:    7 * time.Millisecond,
		signertrace.StageTransport: 1 * time.Millisecond,
		signertrace.StageWire:      2 * time.Millisecond,
	} {
		if got := s.Exclusive(st); got != want {
			t.Errorf("Exclusive(%v) = %v, want %v", st, got, want)
		}
	}
	var sum time.Duration
	for _, st := range signertrace.Stages() {
		sum += s.Exclusive(st)
	}
	if wall := 12 * time.Millisecond; sum != s.EndToEnd(wall) {
		t.Errorf("exclusive stages add up to %v, end to end is %v", sum, s.EndToEnd(wall))
	}
	tr.StageDone(signertrace.StageInfo{Stage: signertrace.StageDevice, Source: signertrace.Modeled, Slept: true, Within: signertrace.Stage(42)})
	if got := c.Summary().Invalid(); got != 1 {
		t.Errorf("a report slept within an unknown stage was not dropped: Invalid() = %d", got)
	}
}

func TestCollectorAttachedTwiceCountsOnce(t *testing.T) {
	c := signertrace.NewCollector()
	other := signertrace.NewCollector()
	ctx := c.WithContext(other.WithContext(c.WithContext(context.Background())))
	signertrace.ContextTrace(ctx).MeasuredDuration(signertrace.StageSign, time.Millisecond)
	if got := c.Summary().Stage(signertrace.StageSign); got.Reports != 1 || got.Measured != time.Millisecond {
		t.Errorf("collector attached twice saw %+v, want one 1 ms report", got)
	}
	// Attaching what ContextTrace returned changes nothing either.
	again := signertrace.WithTrace(ctx, signertrace.ContextTrace(ctx))
	signertrace.ContextTrace(again).MeasuredDuration(signertrace.StageKDF, time.Millisecond)
	if got := c.Summary().Stage(signertrace.StageKDF).Reports; got != 1 {
		t.Errorf("re-attaching the context's trace: %d kdf reports, want 1", got)
	}
	var nilTrace *signertrace.Trace
	nilTrace.Report(signertrace.StageInfo{Stage: signertrace.StageDevice}) // no panic
	if got := other.Summary().Stage(signertrace.StageSign).Reports; got != 1 {
		t.Errorf("the other collector saw %d reports, want 1", got)
	}
}

func TestSummaryStringUnits(t *testing.T) {
	var c signertrace.Collector
	tr := c.Trace()
	tr.MeasuredDuration(signertrace.StageKDF, 1234567*time.Microsecond)
	tr.MeasuredDuration(signertrace.StageSign, 31200*time.Nanosecond)
	tr.Modeled(signertrace.StageConfirm, 4*time.Second, false, "p")
	if got, want := c.Summary().String(), "kdf=1235ms confirm=4000ms(modeled) sign=0.0312ms"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// TestCollectorSaturates: sums near the largest Duration stop there rather
// than wrap negative, per stage, across stages and for counters.
func TestCollectorSaturates(t *testing.T) {
	const huge = time.Duration(math.MaxInt64 - 10)
	var c signertrace.Collector
	tr := c.Trace()
	tr.Modeled(signertrace.StageDevice, huge, false, "forged")
	tr.Modeled(signertrace.StageDevice, huge, false, "forged")
	tr.Modeled(signertrace.StageWire, huge, true, "forged")
	tr.Modeled(signertrace.StageWire, huge, true, "forged")
	tr.MeasuredDuration(signertrace.StageTransport, huge)
	tr.MeasuredDuration(signertrace.StageTransport, time.Hour)
	tr.Add(signertrace.CountBytesIn, math.MaxInt64-1)
	tr.Add(signertrace.CountBytesIn, 2)
	s := c.Summary()
	const maxD = time.Duration(math.MaxInt64)
	if d := s.Stage(signertrace.StageDevice).Modeled; d != maxD {
		t.Errorf("device modeled = %v, want the largest Duration", d)
	}
	if d := s.Stage(signertrace.StageTransport).Measured; d != maxD {
		t.Errorf("transport measured = %v", d)
	}
	if d := s.Stage(signertrace.StageTransport).Contains; d != maxD {
		t.Errorf("transport contains = %v", d)
	}
	for name, d := range map[string]time.Duration{
		"Modeled": s.Modeled(), "Measured": s.Measured(), "Slept": s.Slept(),
		"Total": s.Stage(signertrace.StageTransport).Total(), "EndToEnd": s.EndToEnd(time.Second),
	} {
		if d != maxD {
			t.Errorf("%s = %v, want the largest Duration", name, d)
		}
	}
	if d := s.Accounted(); d != maxD {
		t.Errorf("Accounted = %v", d)
	}
	for _, st := range signertrace.Stages() {
		if d := s.Exclusive(st); d < 0 {
			t.Errorf("Exclusive(%v) = %v", st, d)
		}
	}
	if n := s.Count(signertrace.CountBytesIn); n != math.MaxInt64 {
		t.Errorf("bytes-in = %d", n)
	}
}
