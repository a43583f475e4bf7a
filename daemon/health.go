package daemon

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/signerkit/signerkit/signer"
)

// DefaultHealthInterval is how long a backend's answer — to a sign or to
// a health probe — stands for its health: /readyz probes the device only
// when its last answer is older than this, so a scraper polling /readyz
// cannot hammer a device, and a device that signs often is never probed.
const DefaultHealthInterval = 2 * time.Second

// health is what is known of a backend's device: when it last answered a
// sign or a probe, and with what error (nil: it answered).
type health struct {
	at  time.Time
	err error
}

// healthState is a backend's health record and the lock that makes one
// probe at a time. A sign takes mu once, to record its answer; inflight
// is counted without it.
type healthState struct {
	probeMu sync.Mutex // held for a probe: concurrent /readyz share it

	inflight atomic.Int64 // signs in flight

	mu   sync.Mutex
	last health
}

func (h *healthState) record(err error) {
	h.mu.Lock()
	h.last = health{at: time.Now(), err: err}
	h.mu.Unlock()
}

func (h *healthState) get() health {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last
}

func (h *healthState) signStarted() { h.inflight.Add(1) }

// signDone records a finished sign. Only an answer (a signature, or an
// error that came from the device rather than from the caller or the
// message) says anything about the device's health. The answer is
// recorded before the sign stops counting as in flight, so that fresh,
// which reads in the other order, never misses it.
func (h *healthState) signDone(err error) {
	switch {
	case err == nil:
		h.record(nil)
	case deviceGone(err) || errors.Is(err, context.DeadlineExceeded):
		h.record(err)
	}
	h.inflight.Add(-1)
}

// fresh returns the health record and whether it can stand without a
// probe: it is younger than interval, or a sign is in flight (which will
// tell; a probe would only queue behind it, or in front of the next).
func (h *healthState) fresh(interval time.Duration) (health, bool) {
	busy := h.inflight.Load() > 0
	last := h.get()
	return last, busy || time.Since(last.at) < interval
}

// healthy reports whether the backend is ready, probing the device when
// its last answer is stale; see Daemon.Ready. why describes a backend
// that is not.
func (b *backend) healthy(ctx context.Context) (ok bool, why string) {
	s, cause := b.current()
	if s == nil {
		return false, fmt.Sprintf("backend %s down: %s (reopening with backoff)", b.scheme, Cause(cause))
	}
	last, fresh := b.health.fresh(b.healthInterval)
	if !fresh {
		b.health.probeMu.Lock()
		// Another /readyz may have probed while this one waited.
		if last, fresh = b.health.fresh(b.healthInterval); !fresh {
			last = b.probe(ctx, s)
		}
		b.health.probeMu.Unlock()
	}
	if last.err != nil {
		return false, fmt.Sprintf("backend %s not answering: %s", b.scheme, Cause(last.err))
	}
	if s, _ := b.current(); s == nil { // a sign took it down meanwhile
		return false, fmt.Sprintf("backend %s down (reopening with backoff)", b.scheme)
	}
	return true, ""
}

// probe asks s for its health within the backend's probe timeout (the
// shortest sign_timeout of the chains that use the key), records and
// counts the answer, and takes the backend down when the device went
// away. A signer with no device to lose (no signer.HealthChecker) is
// healthy while it is open.
func (b *backend) probe(ctx context.Context, s signer.Signer) health {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.probeTimeout)
	defer cancel()
	stop := context.AfterFunc(b.life, cancel)
	defer stop()
	_, err := signer.CheckHealth(ctx, s)
	result := "ok"
	if err != nil {
		result = Cause(err)
	}
	b.m.healthChecks.WithLabelValues(b.scheme, result).Inc()
	b.health.record(err)
	if err != nil {
		b.log.Warn("backend health check failed", "cause", result, "err", err)
		if deviceGone(err) {
			b.down(s, err)
		}
	}
	return b.health.get()
}
