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
type handshakeLimiter struct {
	mu        sync.Mutex
	fails     map[string]int
	throttled prometheus.Counter
}

func newHandshakeLimiter(c prometheus.Counter) *handshakeLimiter {
	return &handshakeLimiter{fails: map[string]int{}, throttled: c}
}

func (l *handshakeLimiter) delay(host string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.fails[host]
	if n == 0 {
		return 0
	}
	d := minHandshakeDelay << min(n-1, 16)
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
	if _, known := l.fails[host]; !known && len(l.fails) >= maxTrackedHosts {
		clear(l.fails) // a flood of hosts: start over rather than grow
	}
	l.fails[host]++
}
