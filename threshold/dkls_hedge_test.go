package threshold

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"
)

// TestDKLS23HedgesAHangingParty: party 2 takes every request but answers
// none (its writes hang), with a minute of PartyTimeout. Each sign still
// returns within its 10 s deadline: after the hedge delay it asks party 3
// too, with a presignature of party 3's pool, and returns party 3's
// signature, verified by decred and refsecp256k1. The hedged-away
// request consumed a presignature of party 2 (which signed, unheard):
// two presignatures for one signature, each used once. The coordinator's
// stats show party 2 overtaken and measured slow. With hedging off, the
// same hang costs the whole PartyTimeout before party 3 is asked.
func TestDKLS23HedgesAHangingParty(t *testing.T) {
	f := dklsSetup(t)
	hang := &dklsHang{}
	f.wrap = map[int]func(net.Listener) net.Listener{2: func(l net.Listener) net.Listener { return &waitListener{Listener: l, wait: hang.wait} }}
	f.start(t, 2)
	f.start(t, 3)
	t.Cleanup(func() { hang.set(false) }) // before the parties' Close
	const hedge = 50 * time.Millisecond
	f.timeout, f.hedge = time.Minute, hedge
	s := f.signer(t, 2)
	waitPooled(t, s, 2, 2)
	waitPooled(t, s, 3, 2)
	for _, m := range s.members { // the sign connections, before the hang
		if _, err := m.r.conn(context.Background(), 0); err != nil {
			t.Fatal(err)
		}
	}
	hang.set(true)
	const n = 4
	for i := range n {
		msg := fmt.Appendf(nil, "hedged %d", i)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		sig, err := s.SignContext(ctx, msg)
		cancel()
		if err != nil {
			t.Fatalf("sign %d with party 2 hanging: %v", i, err)
		}
		checkSecp256k1(t, f.shares[0].PublicKey(), msg, sig)
	}
	if got := f.parties[3].Signed(); got != n {
		t.Errorf("party 3 signed %d shares for %d signatures", got, n)
	}
	deadline := time.Now().Add(10 * time.Second)
	for f.parties[2].Signed() == 0 || dklsStats(s, 2).Overtaken == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("party 2 signed %d, overtaken %d: the first sign never asked it", f.parties[2].Signed(), dklsStats(s, 2).Overtaken)
		}
		time.Sleep(5 * time.Millisecond)
	}
	st2, st3 := dklsStats(s, 2), dklsStats(s, 3)
	if st2.RTT < hedge || st2.Shares != 0 || st3.Shares != n || st3.RTT == 0 || !st3.Up {
		t.Errorf("stats: party 2 %+v, party 3 %+v", st2, st3)
	}

	// Hedging off: with a presignature of each party and neither
	// measured, a sign asks party 2 first and waits its PartyTimeout out.
	f.timeout, f.hedge = time.Second, -1
	off := f.signer(t, -1)
	hang.set(false)
	for _, m := range off.members {
		if _, err := off.Presign(context.Background(), m.id, 1); err != nil {
			t.Fatal(err)
		}
		if _, err := m.r.conn(context.Background(), 0); err != nil {
			t.Fatal(err)
		}
	}
	hang.set(true)
	start := time.Now()
	msg := []byte("not hedged")
	sig, err := off.SignContext(context.Background(), msg)
	if err != nil {
		t.Fatal(err)
	}
	checkSecp256k1(t, f.shares[0].PublicKey(), msg, sig)
	if took := time.Since(start); took < f.timeout || dklsStats(off, 2).Timeouts != 1 {
		t.Errorf("unhedged: %v, party 2 %+v; want PartyTimeout (%v) spent on party 2 first", took, dklsStats(off, 2), f.timeout)
	}
}

func dklsStats(s *DKLS23Signer, id int) DKLS23PartyStats {
	for _, st := range s.Stats() {
		if st.ID == id {
			return st
		}
	}
	return DKLS23PartyStats{}
}

// dklsHang holds the writes of a hangListener's connections while set.
type dklsHang struct {
	mu sync.Mutex
	on chan struct{} // closed when the hang is lifted
}

func (h *dklsHang) set(on bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case on && h.on == nil:
		h.on = make(chan struct{})
	case !on && h.on != nil:
		close(h.on)
		h.on = nil
	}
}

func (h *dklsHang) wait(closed <-chan struct{}) {
	h.mu.Lock()
	on := h.on
	h.mu.Unlock()
	if on != nil {
		select {
		case <-on:
		case <-closed:
		}
	}
}

// waitListener's connections call wait before each write, with a
// channel closed when the connection is.
type waitListener struct {
	net.Listener
	wait func(closed <-chan struct{})
}

func (l *waitListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &waitConn{Conn: c, wait: l.wait, closed: make(chan struct{})}, nil
}

type waitConn struct {
	net.Conn
	wait   func(closed <-chan struct{})
	once   sync.Once
	closed chan struct{}
}

func (c *waitConn) Write(p []byte) (int, error) {
	c.wait(c.closed)
	return c.Conn.Write(p)
}

func (c *waitConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.Conn.Close()
}
