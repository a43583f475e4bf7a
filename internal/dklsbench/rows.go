package dklsbench

import (
	"context"
	"crypto/sha256"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signerkit/signerkit/internal/refsecp256k1"

	"github.com/signerkit/signerkit/internal/thresholdbench"
	"github.com/signerkit/signerkit/threshold/dkls23"
	"github.com/signerkit/signerkit/threshold/dkls23/dkls23test"
)

// SignTimeout bounds each sign; a sign that takes longer fails the row.
const SignTimeout = 30 * time.Second

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// cpuSince reports the CPU used since cpu0 per op under unit, if known.
func cpuSince(b *testing.B, cpu0 time.Duration, ok0 bool, ops int, unit string, scale float64) {
	cpu1, ok1 := thresholdbench.CPUTime()
	if ok0 && ok1 && ops > 0 {
		b.ReportMetric(float64(cpu1-cpu0)/scale/float64(ops), unit)
	}
}

// KeygenRow is keygen/inprocess: a whole 2-of-3 key generation, three
// parties in one process, base OTs included. cpu-ms/op is all three
// parties' CPU; payload-B/party the bytes each party sends.
func KeygenRow(b *testing.B) {
	cpu0, ok := thresholdbench.CPUTime()
	var sent int
	for b.Loop() {
		s, shares, err := dkls23test.Keygen(2, 3)
		if err != nil {
			b.Fatal(err)
		}
		if len(shares) != 3 {
			b.Fatal("missing shares")
		}
		sent += s[0] + s[1] + s[2]
	}
	cpuSince(b, cpu0, ok, b.N, "cpu-ms/op", 1e6)
	b.ReportMetric(float64(sent)/3/float64(b.N), "payload-B/party")
}

// PresignRow is presign/inprocess: one presignature of the signing set
// {1, 2} after another, both parties in one process. cpu-ms/op is both
// parties' CPU per presignature (core-seconds, as the comparison counts
// them, ×1000); cpu-ms/party half of it; payload-B/party the bytes each
// party sends for one presignature.
func PresignRow(b *testing.B) {
	shares := fixtureShares(b)
	cpu0, ok := thresholdbench.CPUTime()
	var sent int
	for b.Loop() {
		s, _, err := dkls23test.Presign(shares, Signers)
		if err != nil {
			b.Fatal(err)
		}
		sent += s[0] + s[1]
	}
	cpuSince(b, cpu0, ok, b.N, "cpu-ms/op", 1e6)
	cpuSince(b, cpu0, ok, 2*b.N, "cpu-ms/party", 1e6)
	b.ReportMetric(float64(sent)/2/float64(b.N), "payload-B/party")
}

// PresignParallelRow is presign/parallel: presignatures made GOMAXPROCS at
// a time, the sustained rate of one host running both parties:
// presigns/s, and presigns/s/core (per core-second of CPU).
func PresignParallelRow(b *testing.B) {
	shares := fixtureShares(b)
	cpu0, ok := thresholdbench.CPUTime()
	t0 := time.Now()
	if err := parallel(b.N, func(int) error { _, _, err := dkls23test.Presign(shares, Signers); return err }); err != nil {
		b.Fatal(err)
	}
	elapsed := time.Since(t0)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "presigns/s")
	if cpu1, ok1 := thresholdbench.CPUTime(); ok && ok1 {
		b.ReportMetric(float64(b.N)/(cpu1-cpu0).Seconds(), "presigns/s/core")
	}
}

// sharesOnce is the key the presign and compute rows share.
var sharesOnce = sync.OnceValues(func() ([]*dkls23.Share, error) {
	_, shares, err := dkls23test.Keygen(2, 3)
	return shares, err
})

func fixtureShares(b *testing.B) []*dkls23.Share {
	b.Helper()
	shares, err := sharesOnce()
	if err != nil {
		b.Fatal(err)
	}
	return shares
}

// SignRow is sign/net=<profile>/inflight=<k>: b.N online rounds on f with
// k in flight, each with a presignature made before the clock starts.
// It reports as thresholdbench's sign rows: p50-ms, p99-ms, rtt-ms,
// signs/s, cpu-ms/op, shares/op, payload-B/party, proto-B/party (less the
// 32-byte hash), tls-B/party and wire-B/party, bytes of both directions
// per signature divided by its two parties.
func SignRow(b *testing.B, f *Fixture, k int) {
	b.StopTimer()
	if err := f.Fill(b.N); err != nil {
		b.Fatal(err)
	}
	p0, t0, w0 := f.Traffic()
	cpu0, ok := thresholdbench.CPUTime()
	b.StartTimer()
	start := time.Now()
	res := f.run(b.N, k)
	elapsed := time.Since(start)
	b.StopTimer()
	cpuSince(b, cpu0, ok, b.N, "cpu-ms/op", 1e6)
	p1, t1, w1 := f.Traffic()
	lat := make([]time.Duration, 0, len(res))
	for _, r := range res {
		if r.Err != nil {
			b.Fatal(r.Err)
		}
		rr, ss := r.Sig.R(), r.Sig.S()
		rb, sb := rr.Bytes(), ss.Bytes()
		if !refsecp256k1.VerifyLowS(f.pub, r.Hash, rb[:], sb[:]) {
			b.Fatal("a signature does not verify under the math/big verifier")
		}
		lat = append(lat, r.Took)
	}
	slices.Sort(lat)
	pct := func(p float64) time.Duration { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
	b.ReportMetric(ms(pct(0.5)), "p50-ms")
	b.ReportMetric(ms(pct(0.99)), "p99-ms")
	b.ReportMetric(ms(f.Net.SignRTT()), "rtt-ms")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "signs/s")
	b.ReportMetric(2, "shares/op")
	parties := float64(2 * b.N)
	b.ReportMetric(float64(p1-p0)/parties, "payload-B/party")
	b.ReportMetric(float64(p1-p0)/parties-sha256.Size, "proto-B/party")
	b.ReportMetric(float64(t1-t0)/parties, "tls-B/party")
	b.ReportMetric(float64(w1-w0)/parties, "wire-B/party")
}

// run makes n signs, k at a time, and returns their outcomes.
func (f *Fixture) run(n, k int) []Signed {
	var (
		started atomic.Int64
		mu      sync.Mutex
		out     = make([]Signed, 0, n)
		wg      sync.WaitGroup
	)
	for range min(k, n) {
		wg.Go(func() {
			for started.Add(1) <= int64(n) {
				ctx, cancel := context.WithTimeout(context.Background(), SignTimeout)
				r := f.Sign(ctx)
				cancel()
				mu.Lock()
				out = append(out, r)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return out
}
