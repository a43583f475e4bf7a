package threshold_test

import (
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/signerkit/signerkit/threshold/frost"
	"github.com/signerkit/signerkit/threshold/thresholdtest"
)

// TestHedgedPartyMeasured: a party that a hedge overtakes still answers,
// and its late answer measures it. Once, the request was cancelled with
// the sign, so a far party stayed unmeasured, sorted as the fastest (a
// round trip of 0), and was asked, and hedged away, on every sign: three
// shares and a hedge delay per signature.
//
// The near parties' round trips are measured in real time: on a loaded
// machine (or under the race detector) one takes 100 ms and more, and the
// first sample, which sets the average, may include the sign connection's
// TLS handshake when the first sign races the refiller's dial. Party 3's
// link once added 30 ms, so such noise could sort a near party after it
// (69 ms against 147 ms, once). Its answers now leave farDelay late, more
// than any noise a passing run has, so every sample of party 3 is larger
// than the near parties': the order of the round trips is the model's.
// The delay starts once party 3's connections are up, so that its
// handshakes and first presign do not wait it out.
func TestHedgedPartyMeasured(t *testing.T) {
	const farDelay = time.Second
	slow := &writeDelay{}
	defer slow.set(0) // before the cleanups: Close releases party 3's pool
	c := startCluster(t, thresholdtest.Options{WrapListener: func(id frost.Identifier, l net.Listener) net.Listener {
		if id != 3 {
			return l
		}
		return &delayListener{Listener: l, d: slow}
	}})
	cfg := c.Config
	cfg.HedgeAfter = 5 * time.Millisecond // well before party 3 can answer
	s := newSigner(t, cfg)
	deadline := time.Now().Add(60 * time.Second)
	for st := stats(s, 3); st.Pool == 0 || st.Sign.WireIn == 0; st = stats(s, 3) {
		if time.Now().After(deadline) {
			t.Fatalf("party 3's pool and sign connection never came up: %+v", st)
		}
		time.Sleep(5 * time.Millisecond)
	}
	slow.set(farDelay)
	for i := range 3 {
		mustSign(t, s, []byte(fmt.Sprintf("warm-up %d", i)))
	}
	// Whichever sign asked party 3 first, its answer arrives farDelay
	// after the sign has returned with the other two parties' shares.
	for stats(s, 3).RTT == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("party 3 was never measured: %+v", stats(s, 3))
		}
		mustSign(t, s, []byte("until party 3 is measured"))
		time.Sleep(10 * time.Millisecond)
	}
	if rtt := stats(s, 3).RTT; rtt < farDelay {
		t.Errorf("party 3's round trip is %v, below the %v its answers are delayed", rtt, farDelay)
	}
	// Now known to be slow, party 3 sorts after the two near parties, so
	// signs ask them first. (A hedge may still reach party 3 when a near
	// party is slow to answer, as under the race detector: what a sign
	// asks first is the order of the round trips.)
	for i := range 5 {
		mustSign(t, s, []byte(fmt.Sprintf("after %d", i)))
	}
	far3, near1, near2 := stats(s, 3).RTT, stats(s, 1).RTT, stats(s, 2).RTT
	if far3 <= near1 || far3 <= near2 {
		t.Errorf("round trips: party 3 %v, parties 1 and 2 %v and %v; party 3 should sort last", far3, near1, near2)
	}
}

// writeDelay holds every write of the connections of a delayListener for
// the delay set, while one is set.
type writeDelay struct {
	mu  sync.Mutex
	d   time.Duration
	off chan struct{} // closed when the delay is set to 0
}

func (w *writeDelay) set(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if d == 0 && w.off != nil {
		close(w.off)
		w.off = nil
	} else if d > 0 && w.off == nil {
		w.off = make(chan struct{})
	}
	w.d = d
}

func (w *writeDelay) wait() {
	w.mu.Lock()
	d, off := w.d, w.off
	w.mu.Unlock()
	if d == 0 {
		return
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
	case <-off:
	}
}

type delayListener struct {
	net.Listener
	d *writeDelay
}

func (l *delayListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &delayConn{Conn: c, d: l.d}, nil
}

type delayConn struct {
	net.Conn
	d *writeDelay
}

func (c *delayConn) Write(p []byte) (int, error) {
	c.d.wait()
	return c.Conn.Write(p)
}
