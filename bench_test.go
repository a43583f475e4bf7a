package signerkit_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/signerkit/signerkit/internal/bench"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

// BenchmarkSign measures every registered backend (see internal/bench) over
// the payload table: BenchmarkSign/backend=<name>/payload=<bytes>, with a
// chunk=<bytes> level for backends that have APDU chunk sizes.
func BenchmarkSign(b *testing.B) {
	for _, be := range bench.Backends() {
		b.Run("backend="+be.Name, func(b *testing.B) {
			if be.Skip != nil {
				if reason := be.Skip(); reason != "" {
					b.Skip(reason)
				}
			}
			for _, size := range be.Sizes() {
				name := fmt.Sprintf("payload=%d", size)
				if len(be.Chunks) == 0 {
					b.Run(name, func(b *testing.B) { benchSign(b, be, bench.Params{Payload: size}) })
					continue
				}
				b.Run(name, func(b *testing.B) {
					for _, chunk := range be.Chunks {
						b.Run(fmt.Sprintf("chunk=%d", chunk), func(b *testing.B) {
							benchSign(b, be, bench.Params{Payload: size, Chunk: chunk})
						})
					}
				})
			}
		})
	}
}

func benchSign(b *testing.B, be bench.Backend, p bench.Params) {
	inst, err := be.Open(context.Background(), p)
	if err != nil {
		b.Fatalf("open %s: %v", be.Name, err)
	}
	if inst.Close != nil {
		b.Cleanup(func() { inst.Close() })
	}
	msg := be.NewMessage(p.Payload)
	ctx := context.Background()
	var col *signer.Collector
	if be.Traced {
		col = signer.NewCollector()
		ctx = col.WithContext(ctx)
	}
	var sig []byte
	b.ReportAllocs()
	for b.Loop() {
		sig, err = inst.Sign(ctx, msg)
		if err != nil {
			b.Fatalf("sign: %v", err)
		}
	}
	// Outside the timed loop: the last signature must verify with the
	// standard library, so a fast wrong answer cannot pass.
	if err := signertest.VerifyStd(be.Algorithm, inst.Public, msg, sig); err != nil {
		b.Fatalf("%s: %v", be.Name, err)
	}
	if col != nil {
		reportStages(b, col.Summary())
	}
}

// reportStages turns a collector's totals into per-op metrics: one
// <stage>-ms/op per stage that was reported (measured and modeled summed;
// the trace says which was which), e2e-ms/op, and one <counter>/op per
// counter.
func reportStages(b *testing.B, sum signer.Summary) {
	n := float64(b.N)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / n }
	for _, st := range signer.Stages() {
		if sum.Stage(st).Reports > 0 {
			b.ReportMetric(ms(sum.Exclusive(st)), st.String()+"-ms/op")
		}
	}
	if m := sum.Modeled(); m > 0 {
		b.ReportMetric(ms(m), "modeled-ms/op")
	}
	b.ReportMetric(ms(sum.EndToEnd(b.Elapsed())), "e2e-ms/op")
	for _, c := range signer.Counters() {
		if v := sum.Count(c); v != 0 {
			b.ReportMetric(float64(v)/n, c.String()+"/op")
		}
	}
}
