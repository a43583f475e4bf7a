package threshold_test

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/signerkit/signerkit/netshape"
	"github.com/signerkit/signerkit/threshold/frost"
	"github.com/signerkit/signerkit/threshold/thresholdtest"
)

// TestHedgedPartyMeasured: a party that a hedge overtakes still answers,
// and its late answer measures it. Once, the request was cancelled with
// the sign, so a far party stayed unmeasured, sorted as the fastest (a
// round trip of 0), and was asked, and hedged away, on every sign: three
// shares and a hedge delay per signature.
func TestHedgedPartyMeasured(t *testing.T) {
	far := netshape.Link{Out: netshape.Path{Delay: 30 * time.Millisecond}}
	c := startCluster(t, thresholdtest.Options{WrapListener: func(id frost.Identifier, l net.Listener) net.Listener {
		if id != 3 {
			return l
		}
		sl, err := netshape.NewListener(l, far)
		if err != nil {
			t.Fatal(err)
		}
		return sl
	}})
	cfg := c.Config
	cfg.HedgeAfter = 5 * time.Millisecond // well before party 3 can answer
	s := newSigner(t, cfg)
	for i := range 3 {
		mustSign(t, s, []byte(fmt.Sprintf("warm-up %d", i)))
	}
	// Whichever sign asked party 3 first, its answer arrives about 30 ms
	// after the sign has returned with the other two parties' shares.
	deadline := time.Now().Add(10 * time.Second)
	for stats(s, 3).RTT == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("party 3 was never measured: %+v", stats(s, 3))
		}
		mustSign(t, s, []byte("until party 3 is measured"))
		time.Sleep(10 * time.Millisecond)
	}
	if rtt := stats(s, 3).RTT; rtt < 30*time.Millisecond {
		t.Errorf("party 3's round trip is %v, below the 30 ms its link adds", rtt)
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
