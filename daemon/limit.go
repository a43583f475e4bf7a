package daemon

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Handshake throttling bounds.
const (
	minHandshakeDelay = 100 * time.Millisecond
	maxHandshakeDelay = 5 * time.Second
	maxTrackedHosts   = 1024
)

// handshakeLimiter slows a peer that keeps failing its handshake. gno's
// native client redials about 460 times a second when it is refused (its
// key not on the allowlist); each attempt costs us an X25519 exchange and
// an Ed25519 signature. After a failure from a host, the next connection
// from it waits before its handshake — 100 ms, doubling with each further
// failure up to 5 s — holding the peer's dial open, so that its own
// timeouts, not our CPU, pace it. A success forgets the host.
//
// At most maxTrackedHosts hosts are tracked. A new failing host beyond
// that evicts one entry: the one with the fewest failures, the least
// recent among those. So hosts that fail once each, from however many
// source addresses, evict one another and never a host that is already
// throttled harder than they are.
type handshakeLimiter struct {
	mu        sync.Mutex
	fails     map[string]*hostFails
	seq       uint64 // orders failures: the higher, the more recent
	throttled prometheus.Counter
}

// hostFails is one tracked host: its failures in a row and when the last
// one happened, as the limiter's seq.
type hostFails struct {
	n    int
	last uint64
}

func newHandshakeLimiter(c prometheus.Counter) *handshakeLimiter {
	return &handshakeLimiter{fails: map[string]*hostFails{}, throttled: c}
}

func (l *handshakeLimiter) delay(host string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.fails[host]
	if e == nil {
		return 0
	}
	d := minHandshakeDelay << min(e.n-1, 16)
	return min(d, maxHandshakeDelay)
}

// wait holds a connection from host for its delay, or until ctx ends.
func (l *handshakeLimiter) wait(ctx context.Context, host string) error {
	d := l.delay(host)
	if d == 0 {
		return nil
	}
	l.throttled.Inc()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// result records a handshake's outcome.
func (l *handshakeLimiter) result(host string, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ok {
		delete(l.fails, host)
		return
	}
	l.seq++
	e := l.fails[host]
	if e == nil {
		if len(l.fails) >= maxTrackedHosts {
			l.evictOne()
		}
		e = &hostFails{}
		l.fails[host] = e
	}
	e.n++
	e.last = l.seq
}

// evictOne forgets the host with the fewest failures, the least recent
// among those. A linear scan: it runs only when a new host fails with the
// table full, and costs far less than the handshake that failed.
func (l *handshakeLimiter) evictOne() {
	var victim string
	var ve *hostFails
	for h, e := range l.fails {
		if ve == nil || e.n < ve.n || e.n == ve.n && e.last < ve.last {
			victim, ve = h, e
		}
	}
	delete(l.fails, victim)
}
