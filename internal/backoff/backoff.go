// Package backoff is the one exponential backoff with jitter behind every
// retry loop that waits: the daemon's reopening of a backend, privval's
// redials and accept retries, pkcs11's operation retries, the threshold
// DKG's dials, and the waits for keybase's and gnokeyhome's locks.
package backoff

import (
	"context"
	"math/rand/v2"
	"time"
)

// Backoff hands out waits that start at Min and grow by Factor after each
// one, up to Max, each shortened by a random part of up to Jitter of it.
// The zero Backoff is not useful: set Min. It is not safe for concurrent
// use.
type Backoff struct {
	// Min is the first wait, and the wait after Reset. It must be above 0.
	Min time.Duration
	// Max is the longest wait; a Max below Min means Min.
	Max time.Duration
	// Factor is what each wait is multiplied by to give the next; 0
	// means 2.
	Factor float64
	// Jitter is the fraction of a wait that is drawn at random: a wait of
	// d becomes one between d×(1−Jitter) and d, uniformly, so peers that
	// failed together do not retry together. 0 means none; 0.5 is the
	// usual choice.
	Jitter float64

	cur time.Duration // the next wait before jitter; 0 means Min
}

// Current returns the next wait before jitter.
func (b *Backoff) Current() time.Duration {
	if b.cur <= 0 {
		return b.Min
	}
	return b.cur
}

// Next returns the next wait, with jitter, and grows the one after.
func (b *Backoff) Next() time.Duration {
	d := b.Current()
	f := b.Factor
	if f == 0 {
		f = 2
	}
	limit := max(b.Max, b.Min)
	if next := float64(d) * f; next >= float64(limit) {
		b.cur = limit
	} else {
		b.cur = max(time.Duration(next), b.Min)
	}
	if b.Jitter > 0 {
		if span := time.Duration(float64(d) * min(b.Jitter, 1)); span > 0 {
			d -= rand.N(span + 1)
		}
	}
	return d
}

// Reset makes the next wait Min again, as after a success.
func (b *Backoff) Reset() { b.cur = 0 }

// Sleep waits Next() and reports true, or returns false as soon as ctx
// ends.
func (b *Backoff) Sleep(ctx context.Context) bool { return Sleep(ctx, b.Next()) }

// Sleep waits d and reports true, or returns false as soon as ctx ends
// (at once if it has ended already).
func Sleep(ctx context.Context, d time.Duration) bool { return SleepUntil(ctx, nil, d) }

// SleepUntil is Sleep that also returns false as soon as stop is closed
// (a nil stop is never closed).
func SleepUntil(ctx context.Context, stop <-chan struct{}, d time.Duration) bool {
	if ctx.Err() != nil {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-stop:
		return false
	}
}
