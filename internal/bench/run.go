package bench

import (
	"context"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

// Sign measures one row of the table: it opens be with p, signs once
// untimed, signs in a b.Loop, verifies the last signature with the standard library (outside
// the timed loop, so that a fast wrong answer cannot pass) and, for traced
// backends, reports the stages. It runs under go test and, through
// testing.Benchmark, in programs.
//
// Metrics, all per sign: ns/op is measured host time. A traced row adds
// <stage>-ms/op, the time the host measured in a stage (less simulated time
// slept inside it); <stage>-modeled-ms/op, the time a simulator's profile
// gave a stage; e2e-ms/op, measured plus modeled time that was not slept —
// what the caller of a real device would wait; and <counter>/op for each
// counter reported (apdus/op, bytes-out/op, …). The stage metrics add up to
// e2e-ms/op, less host time outside any stage.
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
	var col *signer.Collector
	if be.Traced {
		col = signer.NewCollector()
		ctx = col.WithContext(ctx)
	}
	// One sign before the clock starts, as the latency analysis left out
	// the first sign after a device wakes (the validator app's on-device
	// confirmation); it also warms caches and sessions for every row alike.
	if _, err := inst.Sign(context.Background(), next()); err != nil {
		b.Fatalf("%s: first sign: %v", be.Name, err)
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
	if err := signertest.VerifyStd(be.Algorithm, inst.Public, msg, sig); err != nil {
		b.Fatalf("%s: %v", be.Name, err)
	}
	if col != nil {
		ReportStages(b, col.Summary(), b.N, b.Elapsed())
	}
}

// ReportStages reports the stages and counters of sum, collected over n
// signs that took elapsed on the wall clock, as per-sign metrics (see
// Sign).
func ReportStages(b *testing.B, sum signer.Summary, n int, elapsed time.Duration) {
	if n <= 0 {
		return
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(n) }
	for _, st := range signer.Stages() {
		t := sum.Stage(st)
		if t.Measured > 0 {
			b.ReportMetric(ms(max(t.Measured-t.Contains, 0)), st.String()+"-ms/op")
		}
		if t.Modeled > 0 {
			b.ReportMetric(ms(t.Modeled), st.String()+"-modeled-ms/op")
		}
	}
	b.ReportMetric(ms(sum.EndToEnd(elapsed)), "e2e-ms/op")
	for _, c := range signer.Counters() {
		if v := sum.Count(c); v != 0 {
			b.ReportMetric(float64(v)/float64(n), c.String()+"/op")
		}
	}
}
