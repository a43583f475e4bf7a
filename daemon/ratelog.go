package daemon

import (
	"sync"
	"time"
)

// logLimit lets a repeated log line through at most once a second and
// counts the ones it held back, for events a peer can make by the
// thousand (a refused node redialling, a flood's accept errors): the
// counters in /metrics have them all.
type logLimit struct {
	mu     sync.Mutex
	last   time.Time // when a line last went through
	quiet  int       // lines held back since
	period time.Duration
}

// allow reports whether a line may be logged now and, if so, how many
// were held back before it.
func (l *logLimit) allow() (ok bool, heldBack int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	period := l.period
	if period == 0 {
		period = time.Second
	}
	if !l.last.IsZero() && now.Sub(l.last) < period {
		l.quiet++
		return false, 0
	}
	heldBack = l.quiet
	l.last, l.quiet = now, 0
	return true, heldBack
}
