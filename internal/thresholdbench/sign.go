package thresholdbench

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// SignTimeout bounds each sign in the rows; a sign that takes longer fails
// the row.
const SignTimeout = 30 * time.Second

// Load is the outcome of signing with a fixed number of signs in flight.
type Load struct {
	Signs    int             // signs made, all verified with crypto/ed25519
	Errors   int             // signs that failed
	FirstErr error           // the first failure
	Distinct []error         // up to 10 failures with distinct messages
	Latency  []time.Duration // each sign's latency, ascending
	Elapsed  time.Duration
	CPU      time.Duration // user and system time of the whole process
	CPUKnown bool
	Traffic  Traffic // online signing traffic, from the coordinator's side
	MsgBytes int     // bytes of the messages signed
}

// Percentile returns the p-th percentile (0 < p ≤ 1) of the latencies by
// nearest rank.
func (l *Load) Percentile(p float64) time.Duration {
	if len(l.Latency) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(l.Latency)))) - 1
	return l.Latency[min(max(i, 0), len(l.Latency)-1)]
}

// Run signs with inflight signs in flight until n signs have been made or,
// if n is 0, until d has passed, then verifies every signature with
// crypto/ed25519 (after the clock stops). Each sign signs a distinct
// prevote at the height after *height, which it moves on.
func (f *Fixture) Run(ctx context.Context, inflight, n int, d time.Duration, height *atomic.Int64) *Load {
	type result struct {
		msg, sig []byte
	}
	var (
		mu       sync.Mutex
		lat      []time.Duration
		results  []result
		allErrs  []error
		started  atomic.Int64
		msgBytes atomic.Int64
		wg       sync.WaitGroup
	)
	deadline := time.Now().Add(d)
	beforeT := f.SignTraffic()
	beforeCPU, cpuOK := cpuTime()
	start := time.Now()
	for range inflight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var myLat []time.Duration
			var mine []result
			var failures []error
			for {
				if n > 0 && started.Add(1) > int64(n) || n == 0 && !time.Now().Before(deadline) {
					break
				}
				msg := Message(height.Add(1))
				msgBytes.Add(int64(len(msg)))
				sctx, cancel := context.WithTimeout(ctx, SignTimeout)
				t0 := time.Now()
				sig, err := f.Signer.SignContext(sctx, msg)
				took := time.Since(t0)
				cancel()
				if err != nil {
					failures = append(failures, err)
					continue
				}
				myLat = append(myLat, took)
				mine = append(mine, result{msg, sig})
			}
			mu.Lock()
			lat = append(lat, myLat...)
			results = append(results, mine...)
			allErrs = append(allErrs, failures...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	afterCPU, _ := cpuTime()
	l := &Load{Elapsed: elapsed, CPU: afterCPU - beforeCPU, CPUKnown: cpuOK, Errors: len(allErrs),
		Traffic: f.SignTraffic().Sub(beforeT)}
	if beforeT.Wire == 0 || l.Traffic.Wire > l.Traffic.TLS*4 {
		l.Traffic.Wire = 0 // a connection was not identified at one end
	}
	if len(allErrs) > 0 {
		l.FirstErr = allErrs[0]
	}
	seen := map[string]bool{}
	for _, e := range allErrs {
		if !seen[e.Error()] && len(l.Distinct) < 10 {
			seen[e.Error()] = true
			l.Distinct = append(l.Distinct, e)
		}
	}
	pub := f.Signer.Public().(ed25519.PublicKey)
	for _, r := range results {
		if !ed25519.Verify(pub, r.msg, r.sig) {
			l.Errors++
			if l.FirstErr == nil {
				l.FirstErr = fmt.Errorf("thresholdbench: a signature of %x does not verify with crypto/ed25519", r.msg)
			}
			continue
		}
		l.Signs++
	}
	slices.Sort(lat)
	l.Latency = lat
	l.MsgBytes = int(msgBytes.Load())
	return l
}

// Report reports l's metrics on b, per sign:
//
//   - p50-ms, p99-ms: the latency percentiles a caller sees;
//   - signs/s: throughput;
//   - rtt-ms: the profile's round trip to the second-nearest party, the
//     floor of a sign's latency;
//   - cpu-ms/op: user and system CPU time of the whole process (the
//     coordinator, all three parties and the network shaper) per sign;
//   - shares/op: valid shares received per sign, 2 unless a hedged
//     request was answered too;
//   - payload-B/party, tls-B/party, wire-B/party: bytes per signature,
//     both directions, divided by its two participating parties: the
//     frame bodies (protocol fields and the message), the bytes under
//     TLS, and those plus TCP/IP headers. Hedged requests' bytes count;
//   - proto-B/party: payload-B/party less the message, the protocol's own
//     fields.
func (l *Load) Report(b *testing.B, n Network) {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(l.Percentile(0.50)), "p50-ms")
	b.ReportMetric(ms(l.Percentile(0.99)), "p99-ms")
	b.ReportMetric(ms(n.SignRTT()), "rtt-ms")
	if l.Elapsed > 0 {
		b.ReportMetric(float64(l.Signs)/l.Elapsed.Seconds(), "signs/s")
	}
	if l.Signs == 0 {
		return
	}
	if l.CPUKnown {
		b.ReportMetric(ms(l.CPU)/float64(l.Signs), "cpu-ms/op")
	}
	b.ReportMetric(float64(l.Traffic.Shares)/float64(l.Signs), "shares/op")
	// Per participating party per signature: two parties take part in
	// each; the bytes of hedged requests count against the signatures.
	parties := float64(2 * l.Signs)
	payload := float64(l.Traffic.Payload) / parties
	b.ReportMetric(payload, "payload-B/party")
	b.ReportMetric(payload-float64(l.MsgBytes)/float64(l.Signs+l.Errors), "proto-B/party")
	b.ReportMetric(float64(l.Traffic.TLS)/parties, "tls-B/party")
	if l.Traffic.Wire > 0 {
		b.ReportMetric(float64(l.Traffic.Wire)/parties, "wire-B/party")
	}
}

// Sign is the online signing row: b.N signs, inflight at a time, on f.
// The clock covers the signs only; every signature is verified with
// crypto/ed25519 after it stops, and a failed sign or a signature that
// does not verify fails the row.
func Sign(b *testing.B, f *Fixture, inflight int, height *atomic.Int64) {
	b.ReportAllocs()
	b.ResetTimer()
	l := f.Run(context.Background(), min(inflight, b.N), b.N, 0, height)
	b.StopTimer()
	if l.Errors > 0 {
		b.Fatalf("%d of %d signs failed; the first: %v", l.Errors, b.N, l.FirstErr)
	}
	l.Report(b, f.Net)
}
