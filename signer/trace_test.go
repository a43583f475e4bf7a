package signer_test

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signer"
)

func TestNilTraceIsSafe(t *testing.T) {
	var tr *signer.Trace
	if !tr.Start().IsZero() {
		t.Error("Start on a nil Trace read the clock")
	}
	tr.Measured(signer.StageSign, time.Now())
	tr.MeasuredDuration(signer.StageSign, time.Millisecond)
	tr.Modeled(signer.StageDevice, time.Millisecond, false, "p")
	tr.Add(signer.CountAPDUs, 1)
	if signer.ContextTrace(context.Background()) != nil {
		t.Error("ContextTrace of a bare context is not nil")
	}
	if ctx := signer.WithTrace(context.Background(), nil); signer.ContextTrace(ctx) != nil {
		t.Error("WithTrace(nil) attached a Trace")
	}
	// A Trace with only a Count hook reads no clock either.
	tr = &signer.Trace{Count: func(signer.Counter, int64) {}}
	if !tr.Start().IsZero() {
		t.Error("Start without a StageDone hook read the clock")
	}
}

func TestWithTraceComposes(t *testing.T) {
	var order []string
	outer := &signer.Trace{
		StageDone: func(i signer.StageInfo) { order = append(order, "outer:"+i.Stage.String()) },
		Count:     func(c signer.Counter, n int64) { order = append(order, "outer:"+c.String()) },
	}
	inner := &signer.Trace{StageDone: func(i signer.StageInfo) { order = append(order, "inner:"+i.Stage.String()) }}
	ctx := signer.WithTrace(signer.WithTrace(context.Background(), outer), inner)
	tr := signer.ContextTrace(ctx)
	tr.MeasuredDuration(signer.StageKDF, time.Millisecond)
	tr.Add(signer.CountAPDUs, 2)
	got := strings.Join(order, " ")
	if want := "inner:kdf outer:kdf outer:apdus"; got != want {
		t.Errorf("hooks ran as %q, want %q", got, want)
	}
}

func TestTraceReportsSourceAndProfile(t *testing.T) {
	var got []signer.StageInfo
	tr := &signer.Trace{StageDone: func(i signer.StageInfo) { got = append(got, i) }}
	start := tr.Start()
	if start.IsZero() {
		t.Fatal("Start with a hook returned the zero time")
	}
	tr.Measured(signer.StageTransport, start)
	tr.Modeled(signer.StageDevice, 526*time.Millisecond, true, "nanosplus (docs/latency-profiles.md §1)")
	tr.Measured(signer.StageSign, time.Time{}) // a zero start is ignored
	if len(got) != 2 {
		t.Fatalf("got %d reports, want 2: %+v", len(got), got)
	}
	if got[0].Source != signer.Measured || got[0].Duration < 0 || got[0].Slept || got[0].Profile != "" {
		t.Errorf("measured report = %+v", got[0])
	}
	if got[1] != (signer.StageInfo{Stage: signer.StageDevice, Duration: 526 * time.Millisecond, Source: signer.Modeled, Slept: true, Profile: "nanosplus (docs/latency-profiles.md §1)"}) {
		t.Errorf("modeled report = %+v", got[1])
	}
}

func TestNames(t *testing.T) {
	var names []string
	for _, s := range signer.Stages() {
		names = append(names, s.String())
	}
	if got, want := strings.Join(names, ","), "kdf,session,transport,stall,wire,confirm,device,sign"; got != want {
		t.Errorf("stages = %s, want %s", got, want)
	}
	names = names[:0]
	for _, c := range signer.Counters() {
		names = append(names, c.String())
	}
	if got, want := strings.Join(names, ","), "apdus,hid-reports,bytes-out,bytes-in,round-trips,retries"; got != want {
		t.Errorf("counters = %s, want %s", got, want)
	}
	if s := signer.Stage(0).String(); s != "Stage(0)" {
		t.Errorf("Stage(0) = %q", s)
	}
	if s := signer.Source(7).String(); s != "Source(7)" {
		t.Errorf("Source(7) = %q", s)
	}
}

func TestCollectorSums(t *testing.T) {
	c := signer.NewCollector()
	tr := signer.ContextTrace(c.WithContext(context.Background()))
	const prof = "nanosplus (docs/latency-profiles.md §1)"
	// One Ledger-like sign through a simulator that sleeps the wire time
	// and only accounts the device time.
	tr.MeasuredDuration(signer.StageTransport, 5*time.Millisecond) // contains 3 ms slept
	tr.Modeled(signer.StageWire, 3*time.Millisecond, true, prof)
	tr.Modeled(signer.StageDevice, 526*time.Millisecond, false, prof)
	tr.Modeled(signer.StageStall, 50*time.Millisecond, false, prof)
	tr.Add(signer.CountAPDUs, 1)
	tr.Add(signer.CountHIDReports, 4)
	tr.Add(signer.CountAPDUs, 1)
	// Reports a collector must drop, not sum.
	tr.MeasuredDuration(signer.Stage(99), time.Hour)
	tr.MeasuredDuration(signer.StageSign, -time.Second)
	tr.Add(signer.Counter(99), 5)
	tr.Add(signer.CountAPDUs, -1)

	s := c.Summary()
	if got := s.Invalid(); got != 4 {
		t.Errorf("Invalid() = %d, want 4", got)
	}
	if got := s.Stage(signer.StageWire); got != (signer.StageTotal{Modeled: 3 * time.Millisecond, Slept: 3 * time.Millisecond, Reports: 1, Profile: prof}) {
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
		{"Exclusive(transport)", s.Exclusive(signer.StageTransport), 2 * time.Millisecond},
		{"Exclusive(device)", s.Exclusive(signer.StageDevice), 526 * time.Millisecond},
		{"Exclusive(kdf)", s.Exclusive(signer.StageKDF), 0},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v, want %v", ch.name, ch.got, ch.want)
		}
	}
	if got := s.Dominant(); got != signer.StageDevice {
		t.Errorf("Dominant() = %v, want device", got)
	}
	if got := s.Count(signer.CountAPDUs); got != 2 {
		t.Errorf("apdus = %d, want 2", got)
	}
	if got, want := s.String(), "transport=5.00ms stall=50.0ms(modeled) wire=3.00ms(modeled) device=526ms(modeled) apdus=2 hid-reports=4"; got != want {
		t.Errorf("String() = %q\nwant        %q", got, want)
	}
	c.Reset()
	if s := c.Summary(); s.Measured() != 0 || s.Modeled() != 0 || s.Count(signer.CountAPDUs) != 0 || s.Dominant() != 0 {
		t.Errorf("after Reset: %v", s)
	}
}

func TestCollectorConcurrent(t *testing.T) {
	c := signer.NewCollector()
	ctx := c.WithContext(context.Background())
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr := signer.ContextTrace(ctx)
			for range 1000 {
				tr.MeasuredDuration(signer.StageSign, time.Microsecond)
				tr.Add(signer.CountRoundTrips, 1)
			}
		}()
	}
	wg.Wait()
	s := c.Summary()
	if got := s.Stage(signer.StageSign); got.Measured != 8000*time.Microsecond || got.Reports != 8000 {
		t.Errorf("sign = %+v, want 8 ms in 8000 reports", got)
	}
	if got := s.Count(signer.CountRoundTrips); got != 8000 {
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
		{"hooks=empty", signer.WithTrace(context.Background(), &signer.Trace{})},
		{"hooks=collector", signer.NewCollector().WithContext(context.Background())},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tr := signer.ContextTrace(tc.ctx)
				start := tr.Start()
				tr.Measured(signer.StageSign, start)
				tr.Add(signer.CountRoundTrips, 1)
			}
		})
	}
}

func TestSleptWithinAnotherStage(t *testing.T) {
	var c signer.Collector // the zero value works
	tr := c.Trace()
	// A session set up during the call, whose modeled device time a
	// realtime simulator slept inside the measured session stage.
	tr.MeasuredDuration(signer.StageSession, 9*time.Millisecond)
	tr.StageDone(signer.StageInfo{Stage: signer.StageDevice, Duration: 7 * time.Millisecond, Source: signer.Modeled, Slept: true, Within: signer.StageSession, Profile: "p"})
	tr.MeasuredDuration(signer.StageTransport, 3*time.Millisecond)
	tr.Modeled(signer.StageWire, 2*time.Millisecond, true, "p") // within transport
	s := c.Summary()
	for st, want := range map[signer.Stage]time.Duration{
		signer.StageSession:   2 * time.Millisecond,
		signer.StageDevice:    7 * time.Millisecond,
		signer.StageTransport: 1 * time.Millisecond,
		signer.StageWire:      2 * time.Millisecond,
	} {
		if got := s.Exclusive(st); got != want {
			t.Errorf("Exclusive(%v) = %v, want %v", st, got, want)
		}
	}
	var sum time.Duration
	for _, st := range signer.Stages() {
		sum += s.Exclusive(st)
	}
	if wall := 12 * time.Millisecond; sum != s.EndToEnd(wall) {
		t.Errorf("exclusive stages add up to %v, end to end is %v", sum, s.EndToEnd(wall))
	}
	tr.StageDone(signer.StageInfo{Stage: signer.StageDevice, Source: signer.Modeled, Slept: true, Within: signer.Stage(42)})
	if got := c.Summary().Invalid(); got != 1 {
		t.Errorf("a report slept within an unknown stage was not dropped: Invalid() = %d", got)
	}
}

func TestCollectorAttachedTwiceCountsOnce(t *testing.T) {
	c := signer.NewCollector()
	other := signer.NewCollector()
	ctx := c.WithContext(other.WithContext(c.WithContext(context.Background())))
	signer.ContextTrace(ctx).MeasuredDuration(signer.StageSign, time.Millisecond)
	if got := c.Summary().Stage(signer.StageSign); got.Reports != 1 || got.Measured != time.Millisecond {
		t.Errorf("collector attached twice saw %+v, want one 1 ms report", got)
	}
	// Attaching what ContextTrace returned changes nothing either.
	again := signer.WithTrace(ctx, signer.ContextTrace(ctx))
	signer.ContextTrace(again).MeasuredDuration(signer.StageKDF, time.Millisecond)
	if got := c.Summary().Stage(signer.StageKDF).Reports; got != 1 {
		t.Errorf("re-attaching the context's trace: %d kdf reports, want 1", got)
	}
	var nilTrace *signer.Trace
	nilTrace.Report(signer.StageInfo{Stage: signer.StageDevice}) // no panic
	if got := other.Summary().Stage(signer.StageSign).Reports; got != 1 {
		t.Errorf("the other collector saw %d reports, want 1", got)
	}
}

func TestSummaryStringUnits(t *testing.T) {
	var c signer.Collector
	tr := c.Trace()
	tr.MeasuredDuration(signer.StageKDF, 1234567*time.Microsecond)
	tr.MeasuredDuration(signer.StageSign, 31200*time.Nanosecond)
	tr.Modeled(signer.StageConfirm, 4*time.Second, false, "p")
	if got, want := c.Summary().String(), "kdf=1235ms confirm=4000ms(modeled) sign=0.0312ms"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// TestCollectorSaturates: sums near the largest Duration stop there rather
// than wrap negative, per stage, across stages and for counters.
func TestCollectorSaturates(t *testing.T) {
	const huge = time.Duration(math.MaxInt64 - 10)
	var c signer.Collector
	tr := c.Trace()
	tr.Modeled(signer.StageDevice, huge, false, "forged")
	tr.Modeled(signer.StageDevice, huge, false, "forged")
	tr.Modeled(signer.StageWire, huge, true, "forged")
	tr.Modeled(signer.StageWire, huge, true, "forged")
	tr.MeasuredDuration(signer.StageTransport, huge)
	tr.MeasuredDuration(signer.StageTransport, time.Hour)
	tr.Add(signer.CountBytesIn, math.MaxInt64-1)
	tr.Add(signer.CountBytesIn, 2)
	s := c.Summary()
	const maxD = time.Duration(math.MaxInt64)
	if d := s.Stage(signer.StageDevice).Modeled; d != maxD {
		t.Errorf("device modeled = %v, want the largest Duration", d)
	}
	if d := s.Stage(signer.StageTransport).Measured; d != maxD {
		t.Errorf("transport measured = %v", d)
	}
	if d := s.Stage(signer.StageTransport).Contains; d != maxD {
		t.Errorf("transport contains = %v", d)
	}
	for name, d := range map[string]time.Duration{
		"Modeled": s.Modeled(), "Measured": s.Measured(), "Slept": s.Slept(),
		"Total": s.Stage(signer.StageTransport).Total(), "EndToEnd": s.EndToEnd(time.Second),
	} {
		if d != maxD {
			t.Errorf("%s = %v, want the largest Duration", name, d)
		}
	}
	if d := s.Accounted(); d != maxD {
		t.Errorf("Accounted = %v", d)
	}
	for _, st := range signer.Stages() {
		if d := s.Exclusive(st); d < 0 {
			t.Errorf("Exclusive(%v) = %v", st, d)
		}
	}
	if n := s.Count(signer.CountBytesIn); n != math.MaxInt64 {
		t.Errorf("bytes-in = %d", n)
	}
}
