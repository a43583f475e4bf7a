package thresholdbench

import (
	"context"
	"crypto/ed25519"
	"flag"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
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
	// Timed, if not 0, is the number of signs Elapsed timed, fewer than
	// Signs: Sign's rows let the signs still in flight when the clock
	// stops finish, and count their traffic, CPU and messages but not
	// their latencies.
	Timed    int
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

// signed is the outcome of one sign.
type signed struct {
	msg, sig []byte
	took     time.Duration
	err      error
}

// sign signs the prevote at the height after *height, which it moves on.
func (f *Fixture) sign(ctx context.Context, height *atomic.Int64) signed {
	msg := Message(height.Add(1))
	ctx, cancel := context.WithTimeout(ctx, SignTimeout)
	defer cancel()
	t0 := time.Now()
	sig, err := f.Signer.SignContext(ctx, msg)
	return signed{msg: msg, sig: sig, took: time.Since(t0), err: err}
}

// work starts inflight goroutines that sign on f, one sign after another,
// for as long as more reports true, and hand each sign's outcome to done;
// the i-th starts i·spread/inflight after the first. The returned function
// waits for them to return.
func (f *Fixture) work(ctx context.Context, inflight int, spread time.Duration, height *atomic.Int64, more func() bool, done func(signed)) (wait func()) {
	var wg sync.WaitGroup
	for i := range inflight {
		wg.Go(func() {
			time.Sleep(spread * time.Duration(i) / time.Duration(inflight))
			for more() {
				done(f.sign(ctx, height))
			}
		})
	}
	return wg.Wait
}

// meter measures a load on f: the time, traffic and CPU since it started.
type meter struct {
	f       *Fixture
	start   time.Time
	traffic Traffic
	cpu     time.Duration
	cpuOK   bool
}

func (f *Fixture) meter() meter {
	m := meter{f: f, traffic: f.SignTraffic()}
	m.cpu, m.cpuOK = cpuTime()
	m.start = time.Now()
	return m
}

// load returns the Load of the signs rs made since m started, after
// verifying every signature with crypto/ed25519.
func (m meter) load(rs []signed) *Load {
	elapsed := time.Since(m.start)
	cpu, _ := cpuTime()
	l := &Load{Elapsed: elapsed, CPU: cpu - m.cpu, CPUKnown: m.cpuOK, Traffic: m.f.SignTraffic().Sub(m.traffic)}
	if m.traffic.Wire == 0 || l.Traffic.Wire > l.Traffic.TLS*4 {
		l.Traffic.Wire = 0 // a connection was not identified at one end
	}
	fail := func(err error) {
		l.Errors++
		if l.FirstErr == nil {
			l.FirstErr = err
		}
		for _, e := range l.Distinct {
			if e.Error() == err.Error() {
				return
			}
		}
		if len(l.Distinct) < 10 {
			l.Distinct = append(l.Distinct, err)
		}
	}
	pub := m.f.Signer.Public().(ed25519.PublicKey)
	for _, r := range rs {
		l.MsgBytes += len(r.msg)
		switch {
		case r.err != nil:
			fail(r.err)
		case !ed25519.Verify(pub, r.msg, r.sig):
			fail(fmt.Errorf("thresholdbench: a signature of %x does not verify with crypto/ed25519", r.msg))
		default:
			l.Signs++
		}
	}
	l.Latency = latencies(rs)
	return l
}

// latencies returns the latencies of the signs of rs that did not fail,
// ascending.
func latencies(rs []signed) []time.Duration {
	var lat []time.Duration
	for _, r := range rs {
		if r.err == nil {
			lat = append(lat, r.took)
		}
	}
	slices.Sort(lat)
	return lat
}

// Run signs with inflight signs in flight until n signs have been made or,
// if n is 0, until d has passed, then verifies every signature with
// crypto/ed25519 (after the clock stops). Each sign signs a distinct
// prevote at the height after *height, which it moves on.
func (f *Fixture) Run(ctx context.Context, inflight, n int, d time.Duration, height *atomic.Int64) *Load {
	var (
		started atomic.Int64
		mu      sync.Mutex
		rs      []signed
	)
	deadline := time.Now().Add(d)
	more := func() bool {
		if n > 0 {
			return started.Add(1) <= int64(n)
		}
		return time.Now().Before(deadline)
	}
	m := f.meter()
	f.work(ctx, inflight, 0, height, more, func(r signed) {
		mu.Lock()
		rs = append(rs, r)
		mu.Unlock()
	})()
	return m.load(rs)
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
		timed := l.Signs
		if l.Timed > 0 {
			timed = l.Timed
		}
		b.ReportMetric(float64(timed)/l.Elapsed.Seconds(), "signs/s")
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

// Sign is the online signing row: a sustained load of inflight signs in
// flight on f, each a distinct prevote at the height after *height, which
// it moves on. The signs start spread over a round trip, so that they
// finish in a stream rather than in waves; once as many signs as are in
// flight have finished, b.Loop counts the signs as they finish, one an
// iteration, so ns/op is the inverse of the throughput, p50-ms and
// p99-ms are the latencies of the signs counted, and signs/s their number
// over the time b.Loop ran. When b.Loop ends the signs still in flight
// finish. The signs before and after b.Loop are not timed, but their
// traffic, CPU and messages count, so that the figures per sign
// (cpu-ms/op, shares/op, the bytes) cover every sign made. Every signature
// is verified with crypto/ed25519 after the clock stops, and a failed sign
// or a signature that does not verify fails the row.
//
// A short -benchtime counts few signs of a load whose signs take a round
// trip each: at the default 100 ms on the transatlantic profile (a 90 ms
// round trip) a row sees about one round trip's signs, one wave of the
// load. A -benchtime of Nx (the smoke run's 1x) counts N signs and keeps
// at most N in flight. Pass -benchtime (1s or more) for steady-state
// figures.
func Sign(b *testing.B, f *Fixture, inflight int, height *atomic.Int64) {
	b.ReportAllocs()
	if bt := flag.Lookup("test.benchtime"); bt != nil {
		if n, err := strconv.Atoi(strings.TrimSuffix(bt.Value.String(), "x")); err == nil && n > 0 {
			inflight = min(inflight, n)
		}
	}
	var (
		out     = make(chan signed)
		stopped = make(chan struct{})
		mu      sync.Mutex
		untimed []signed // the signs that finished before or after b.Loop
		timed   []signed
	)
	more := func() bool {
		select {
		case <-stopped:
			return false
		default:
			return true
		}
	}
	m := f.meter()
	wait := f.work(context.Background(), inflight, f.Net.SignRTT(), height, more, func(r signed) {
		select {
		case out <- r:
		case <-stopped:
			mu.Lock()
			untimed = append(untimed, r)
			mu.Unlock()
		}
	})
	for range inflight {
		untimed = append(untimed, <-out)
	}
	start := time.Now()
	for b.Loop() {
		timed = append(timed, <-out)
	}
	elapsed := time.Since(start)
	close(stopped)
	wait()
	l := m.load(append(untimed, timed...))
	if l.Errors > 0 {
		b.Fatalf("%d of %d signs failed; the first: %v", l.Errors, l.Signs+l.Errors, l.FirstErr)
	}
	l.Elapsed, l.Timed, l.Latency = elapsed, len(timed), latencies(timed)
	l.Report(b, f.Net)
}
