package threshold_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signerkit/signerkit/threshold/thresholdtest"
)

// TestFailedAttemptKeepsItsOtherRequest: an attempt ends at its first
// failed share request (party 1 is down), while its request to party 2
// is still on its way (the coordinator's writes to party 2 are slowed). That request is
// not cancelled with the attempt: party 2 serves it, and the coordinator
// releases no pair of party 2's. (Cancelled, the
// request's pair was released, and the release could reach party 2
// before the request, which party 2 then refused as asking for a used
// pair: TestTwoCoordinatorsOnePartyDown's occasional one.)
func TestFailedAttemptKeepsItsOtherRequest(t *testing.T) {
	c := startCluster(t, thresholdtest.Options{})
	cfg := c.Config
	cfg.HedgeAfter = -1
	cfg.PoolSize = 8
	var slow atomic.Bool
	addr2 := cfg.Parties[1].Addr
	cfg.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil || addr != addr2 {
			return conn, err
		}
		return &slowConn{Conn: conn, slow: &slow}, nil
	}
	s := newSigner(t, cfg)
	// No sign before the one under test: every party is unmeasured, so
	// its first attempt asks parties 1 and 2, in the configured order.
	deadline := time.Now().Add(10 * time.Second)
	for stats(s, 1).Pool == 0 || stats(s, 2).Pool == 0 || stats(s, 3).Pool == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the pools did not fill: %+v", s.Stats())
		}
		time.Sleep(5 * time.Millisecond)
	}
	c.Stop(1)
	slow.Store(true)
	mustSign(t, s, []byte("party 1 is down"))
	if st := stats(s, 1); st.Failures == 0 {
		t.Fatalf("the first attempt did not ask party 1: %+v", st)
	}
	// Party 2 serves the request either way (it was sent); cancelled, it
	// was followed by a release, sent 200 ms or more later: that is given
	// a second to show.
	for time.Now().Before(deadline) && c.Party(2).ServeStats().Shares < 2 {
		time.Sleep(5 * time.Millisecond)
	}
	for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if st := stats(s, 2); st.Released > 0 || st.Dropped > 0 {
			break
		}
	}
	if st, served := stats(s, 2), c.Party(2).ServeStats(); served.Shares != 2 || served.NonceUsed != 0 || st.Released != 0 || st.Dropped != 0 {
		t.Fatalf("party 2: want 2 shares served (the failed attempt's and the signature's), no pair released: %+v; served %+v", st, served)
	}
}

// slowConn delays each write by 200 ms while slow is set.
type slowConn struct {
	net.Conn
	slow *atomic.Bool
}

func (c *slowConn) Write(p []byte) (int, error) {
	if c.slow.Load() {
		time.Sleep(200 * time.Millisecond)
	}
	return c.Conn.Write(p)
}
