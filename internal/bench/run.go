package bench

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signer/signertrace"
)

// Sign measures one row of the table: it opens be with p, signs once
// untimed, signs in a b.Loop, verifies the last signature with the standard library (outside
// the timed loop, so that a fast wrong answer cannot pass) and, for traced
// backends, reports the stages. It runs under go test and, through
// testing.Benchmark, in programs.
//
// Metrics, all per sign: ns/op is measured host time and e2e-ms/op the
// latency a caller would see (host time plus modeled time a simulator only
// accounted; for a row without a trace, host time alone). A traced row adds
// the stages and counters that ReportStages describes, and a row whose
// Instance has Metrics its own <key>/op.
func Sign(b *testing.B, be Backend, p Params) {
	inst, err := be.Open(context.Background(), p)
	if err != nil {
		b.Fatalf("open %s: %v", be.Name, err)
	}
	if inst.Close != nil {
		b.Cleanup(func() { inst.Close() })
	}
	next := be.MessageSource(p.Payload)
	ctx := context.Background()
	var col *signertrace.Collector
	if be.Traced {
		col = signertrace.NewCollector()
		ctx = col.WithContext(ctx)
	}
	// One sign before the clock starts, as the latency analysis left out
	// the first sign after a device wakes (the validator app's on-device
	// confirmation); it also warms caches and sessions for every row alike.
	if _, err := inst.Sign(context.Background(), next()); err != nil {
		b.Fatalf("%s: first sign: %v", be.Name, err)
	}
	var before map[string]float64
	if inst.Metrics != nil {
		before = inst.Metrics()
	}
	var msg, sig []byte
	b.ReportAllocs()
	for b.Loop() {
		msg = next()
		sig, err = inst.Sign(ctx, msg)
		if err != nil {
			b.Fatalf("%s: sign: %v", be.Name, err)
		}
	}
	var after map[string]float64
	if inst.Metrics != nil {
		after = inst.Metrics()
	}
	if err := inst.Verify(be, msg, sig); err != nil {
		b.Fatalf("%s: %v", be.Name, err)
	}
	if b.N > 0 {
		for unit, v := range after {
			b.ReportMetric((v-before[unit])/float64(b.N), unit+"/op")
		}
	}
	if col != nil {
		ReportStages(b, col.Summary(), b.N, b.Elapsed(), be.Stages...)
	} else if b.N > 0 {
		// An untraced row has no modeled time: its end-to-end latency is
		// its host time, reported under the same unit for every row.
		b.ReportMetric(float64(b.Elapsed())/float64(time.Millisecond)/float64(b.N), "e2e-ms/op")
	}
}

// ReportStages reports the stages and counters of sum, collected over n
// signs that took elapsed on the wall clock, as per-sign metrics (see
// Sign):
//
//   - <stage>-ms/op: the stage's own time, Summary.Exclusive — measured
//     plus modeled, less modeled time slept inside it — so that the stage
//     metrics add up to e2e-ms/op, less host time outside every stage;
//   - <stage>-modeled-ms/op: the part of <stage>-ms/op that came from a
//     latency profile rather than the host clock, reported whenever there
//     is one (equal to <stage>-ms/op for a stage that is modeled only);
//   - modeled-ms/op: all modeled time, slept or only accounted;
//   - e2e-ms/op: the wall clock plus modeled time that was only accounted,
//     the latency the caller of a real device would see;
//   - <counter>/op for every counter reported.
//
// Stages in always are reported as 0 when nothing reached them.
func ReportStages(b *testing.B, sum signertrace.Summary, n int, elapsed time.Duration, always ...signertrace.Stage) {
	if n <= 0 {
		return
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(n) }
	for _, st := range signertrace.Stages() {
		t := sum.Stage(st)
		if t.Reports == 0 && !slices.Contains(always, st) {
			continue
		}
		b.ReportMetric(ms(sum.Exclusive(st)), st.String()+"-ms/op")
		if t.Modeled > 0 {
			b.ReportMetric(ms(t.Modeled), st.String()+"-modeled-ms/op")
		}
	}
	if m := sum.Modeled(); m > 0 {
		b.ReportMetric(ms(m), "modeled-ms/op")
	}
	b.ReportMetric(ms(sum.EndToEnd(elapsed)), "e2e-ms/op")
	for _, c := range signertrace.Counters() {
		if v := sum.Count(c); v != 0 {
			b.ReportMetric(float64(v)/float64(n), c.String()+"/op")
		}
	}
}

// Verify measures one row of the verification table: c's Setup for a
// message of size bytes (untimed), one verification before the clock
// starts, then the verification in a b.Loop. Every verification must
// succeed, so that a fast wrong answer cannot pass.
func Verify(b *testing.B, c VerifyCase, size int) {
	verify, err := c.Setup(size)
	if err != nil {
		b.Fatalf("%s: setup: %v", c.Name, err)
	}
	if err := verify(); err != nil {
		b.Fatalf("%s: first verify: %v", c.Name, err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := verify(); err != nil {
			b.Fatalf("%s: verify: %v", c.Name, err)
		}
	}
}
