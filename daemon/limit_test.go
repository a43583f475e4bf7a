package daemon

import (
	"fmt"
	"testing"
)

// TestHandshakeLimiterFlood: a host throttled for its failures stays
// throttled when 2,000 other hosts (cheap IPv6 source addresses) fail
// after it, and the table stays bounded.
func TestHandshakeLimiterFlood(t *testing.T) {
	for _, others := range []int{1, 2} { // each other host fails this many times
		t.Run(fmt.Sprintf("others fail %dx", others), func(t *testing.T) {
			l := newHandshakeLimiter(nopCounter{})
			const throttled = "2001:db8::1"
			for range others + 2 {
				l.result(throttled, false)
			}
			want := l.delay(throttled)
			if want < minHandshakeDelay {
				t.Fatalf("delay %v after %d failures", want, others+2)
			}
			for i := range 2000 {
				host := fmt.Sprintf("2001:db8:%x::%x", i>>16, i&0xffff)
				for range others {
					l.result(host, false)
				}
				if n := len(l.fails); n > maxTrackedHosts {
					t.Fatalf("%d hosts tracked, bound %d", n, maxTrackedHosts)
				}
			}
			if d := l.delay(throttled); d != want {
				t.Fatalf("after 2000 other hosts failed, the throttled host's delay is %v, was %v", d, want)
			}
			// The most recent of the flood is tracked too: eviction takes
			// the oldest of the least-failed, not the newcomer.
			if d := l.delay("2001:db8:0::7cf"); d == 0 {
				t.Fatal("the last failing host is not tracked")
			}
		})
	}
}
