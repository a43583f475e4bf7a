package dklsbench

import (
	"context"
	"crypto/sha256"
	"slices"
	"sync"
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

// SignRow is sign/net=<profile>/inflight=<k>: a sustained load of k signs
// in flight on f, as thresholdbench's sign rows run theirs. The signs start
// spread over a round trip, so that they finish in a stream; once k signs
// have finished, the next b.N are timed (p50-ms, p99-ms and signs/s are
// theirs), then the signs still in flight finish untimed. Every sign's
// presignature is made before the clock starts, b.N + 2k of them. The
// per-sign figures (cpu-ms/op, shares/op and the bytes: payload-B/party,
// proto-B/party less the 32-byte hash, tls-B/party, wire-B/party, both
// directions per signature divided by its two parties) cover every sign
// made. Every signature is verified with refsecp256k1 after the clock
// stops; a failure fails the row.
func SignRow(b *testing.B, f *Fixture, k int) {
	b.StopTimer()
	k = min(k, b.N)
	if err := f.Fill(b.N + 2*k); err != nil {
		b.Fatal(err)
	}
	p0, t0, w0 := f.Traffic()
	cpu0, ok := thresholdbench.CPUTime()
	untimed, timed, elapsed := f.sustain(k, b.N, b.StartTimer, b.StopTimer)
	all := append(untimed, timed...)
	cpuSince(b, cpu0, ok, len(all), "cpu-ms/op", 1e6)
	p1, t1, w1 := f.Traffic()
	for _, r := range all {
		if r.Err != nil {
			b.Fatal(r.Err)
		}
		rr, ss := r.Sig.R(), r.Sig.S()
		rb, sb := rr.Bytes(), ss.Bytes()
		if !refsecp256k1.VerifyLowS(f.pub, r.Hash, rb[:], sb[:]) {
			b.Fatal("a signature does not verify under the math/big verifier")
		}
	}
	lat := make([]time.Duration, 0, len(timed))
	for _, r := range timed {
		lat = append(lat, r.Took)
	}
	slices.Sort(lat)
	pct := func(p float64) time.Duration { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
	b.ReportMetric(ms(pct(0.5)), "p50-ms")
	b.ReportMetric(ms(pct(0.99)), "p99-ms")
	b.ReportMetric(ms(f.Net.SignRTT()), "rtt-ms")
	b.ReportMetric(float64(len(timed))/elapsed.Seconds(), "signs/s")
	b.ReportMetric(2, "shares/op")
	parties := float64(2 * len(all))
	b.ReportMetric(float64(p1-p0)/parties, "payload-B/party")
	b.ReportMetric(float64(p1-p0)/parties-sha256.Size, "proto-B/party")
	b.ReportMetric(float64(t1-t0)/parties, "tls-B/party")
	b.ReportMetric(float64(w1-w0)/parties, "wire-B/party")
}

// sustain keeps k signs in flight, their starts spread over the network's
// sign round trip, and returns the first k to finish and those after the
// n that follow (untimed), the n (timed), and the time the n took, between
// its calls of start and stop.
func (f *Fixture) sustain(k, n int, start, stop func()) (untimed, timed []Signed, elapsed time.Duration) {
	var (
		out     = make(chan Signed)
		stopped = make(chan struct{})
		mu      sync.Mutex
		wg      sync.WaitGroup
		late    []Signed
	)
	spread := f.Net.SignRTT()
	for i := range k {
		wg.Go(func() {
			time.Sleep(spread * time.Duration(i) / time.Duration(k))
			for {
				select {
				case <-stopped:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), SignTimeout)
				r := f.Sign(ctx)
				cancel()
				select {
				case out <- r:
				case <-stopped:
					mu.Lock()
					late = append(late, r)
					mu.Unlock()
					return
				}
			}
		})
	}
	for range k {
		untimed = append(untimed, <-out)
	}
	start()
	t0 := time.Now()
	for range n {
		timed = append(timed, <-out)
	}
	elapsed = time.Since(t0)
	stop()
	close(stopped)
	wg.Wait()
	return append(untimed, late...), timed, elapsed
}
