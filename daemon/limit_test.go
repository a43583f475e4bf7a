package daemon

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/signerkit/signerkit/privval"
	"github.com/signerkit/signerkit/privval/privvaltest"
	"github.com/signerkit/signerkit/signbytes"
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

// tcpFixture is a daemon serving chainID over tm2-remote on a TCP
// listener of 127.0.0.1, to the node identity node only.
type tcpFixture struct {
	*fixture
	addr string             // the listener's address
	node ed25519.PrivateKey // the allowlisted node's identity
	id   ed25519.PublicKey  // the daemon's identity
}

func newTCPFixture(t *testing.T, edit func(*Config)) *tcpFixture {
	t.Helper()
	dir := t.TempDir()
	keyPath, pub := writeKey(t, dir, 3)
	idPath, id := writeKey(t, dir, 4)
	node := ed25519.NewKeyFromSeed(bytesOf(9, ed25519.SeedSize))
	cfg := newConfig(t, dir, keyPath, ProtocolTM2Remote, "tcp://127.0.0.1:0")
	cfg.IdentityKey = idPath
	cfg.Chains[0].Validators[0].Allow = []string{fmt.Sprintf("%x", []byte(node.Public().(ed25519.PublicKey)))}
	if edit != nil {
		edit(cfg)
	}
	if _, err := cfg.check(false); err != nil {
		t.Fatal(err)
	}
	if err := InitState(context.Background(), cfg.StateDir, chainID, 1); err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, dir: dir, pub: pub, cfg: cfg}
	if err := f.start(Options{}); err != nil {
		t.Fatal(err)
	}
	return &tcpFixture{fixture: f, addr: f.d.Listeners()[0].String(), node: node, id: id}
}

// dialFrom connects to addr from the local address ip (any of 127/8).
func dialFrom(ctx context.Context, ip, addr string) (net.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return d.DialContext(ctx, "tcp", addr)
}

// signAs connects from ip as the node with identity key, runs the
// handshake and signs a prevote at height h; it returns how long that
// took, connect included.
func (f *tcpFixture) signAs(ctx context.Context, ip string, key ed25519.PrivateKey, h int64) (time.Duration, error) {
	start := time.Now()
	conn, err := dialFrom(ctx, ip, f.addr)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	sc, _, err := privval.LegacySecretConnection(key, []ed25519.PublicKey{f.id})(ctx, conn)
	if err != nil {
		return 0, err
	}
	defer sc.Close()
	sb, err := signbytes.Message{Format: signbytes.TM2, Phase: signbytes.Prevote, Height: h, BlockID: block(h, 1), Timestamp: baseTime, ChainID: chainID}.Bytes()
	if err != nil {
		return 0, err
	}
	sig, err := privvaltest.NewNativeClient(sc).Sign(ctx, sb)
	if err != nil {
		return 0, err
	}
	if !ed25519.Verify(f.pub, sb, sig) {
		return 0, errors.New("the signature does not verify")
	}
	return time.Since(start), nil
}

// TestFailingHostDoesNotDelayValidator: a client on the validator's own
// address keeps failing its handshake (an identity not on the
// allowlist), which used to hold every further connection from that
// address for up to 5 s before its handshake, the validator's included.
// Now the validator's handshake runs at once: it connects and signs
// within 1 s, while the failing client's connections are tarpitted after
// their failed handshake.
func TestFailingHostDoesNotDelayValidator(t *testing.T) {
	f := newTCPFixture(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stranger := ed25519.NewKeyFromSeed(bytesOf(10, ed25519.SeedSize))
	const failures = 8 // 100 ms << 7 > 5 s: the longest hold
	var wg sync.WaitGroup
	for range failures {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := dialFrom(ctx, "127.0.0.1", f.addr)
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			// The stranger's handshake completes on its side; the daemon
			// refuses its key and holds the connection.
			if _, _, err := privval.LegacySecretConnection(stranger, []ed25519.PublicKey{f.id})(ctx, conn); err != nil {
				t.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, conn)
		}()
	}
	lim := f.d.vals[0].admit.limiter
	waitFor(t, "the failing host held for the longest", func() bool { return lim.delay("127.0.0.1") == maxHandshakeDelay })
	took, err := f.signAs(ctx, "127.0.0.1", f.node, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the validator connected and signed in %v beside a host held for %v", took, maxHandshakeDelay)
	if took > time.Second {
		t.Fatalf("the validator took %v to connect and sign: delayed for its address's failures", took)
	}
	if n := metric(f.scrape(), "signerkit_handshakes_throttled_total"); n < 1 {
		t.Fatalf("handshakes_throttled_total %v: the failed connections were not held", n)
	}
	f.shutdown() // ends the held connections
	wg.Wait()
}

// silentConns opens n connections from ip that send nothing, and counts
// those the daemon closes.
type silentConns struct {
	mu     sync.Mutex
	conns  []net.Conn
	closed atomic.Int64
	wg     sync.WaitGroup
}

func (s *silentConns) open(t *testing.T, ctx context.Context, ip, addr string, n int) {
	t.Helper()
	for range n {
		c, err := dialFrom(ctx, ip, addr)
		if err != nil {
			t.Fatal(err)
		}
		s.mu.Lock()
		s.conns = append(s.conns, c)
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			_, _ = io.Copy(io.Discard, c) // the daemon's handshake message, then its close
			s.closed.Add(1)
		}()
	}
}

func (s *silentConns) close() {
	s.mu.Lock()
	for _, c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// TestPendingHandshakesCapped: connections that send nothing used to be
// held, every one, for the 10 s handshake timeout. Now those beyond the
// per-host cap (16) and the total cap (128) are closed at once, the
// oldest first, and the validator, from an address flooded up to its
// cap, still connects and signs within 1 s.
func TestPendingHandshakesCapped(t *testing.T) {
	f := newTCPFixture(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var s silentConns
	defer s.close()
	const perHost, total = DefaultMaxPendingHandshakesPerHost, DefaultMaxPendingHandshakes
	// At once: well before the handshake timeout would close them.
	atOnce := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(privval.DefaultHandshakeTimeout / 2)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s not closed after %v (%d closed)", what, privval.DefaultHandshakeTimeout/2, s.closed.Load())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	s.open(t, ctx, "127.0.0.2", f.addr, 40)
	atOnce("the connections beyond the per-host cap", func() bool { return s.closed.Load() >= 40-perHost })
	if p := metric(f.scrape(), "signerkit_pending_handshakes"); p != perHost {
		t.Fatalf("%v connections pending from one host, cap %d", p, perHost)
	}
	took, err := f.signAs(ctx, "127.0.0.2", f.node, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("validator beside %d silent connections from its address: connected and signed in %v", perHost, took)
	// 12 more hosts, 16 each: 208 connections; 128 may wait.
	for i := range 12 {
		s.open(t, ctx, fmt.Sprintf("127.0.1.%d", i+1), f.addr, perHost)
	}
	atOnce("the connections beyond the total cap", func() bool { return s.closed.Load() >= 40+12*perHost-total })
	text := f.scrape()
	if p := metric(text, "signerkit_pending_handshakes"); p != total {
		t.Fatalf("%v connections pending, cap %d", p, total)
	}
	shed := metric(text, "signerkit_pending_handshakes_shed_total", "cap", "host") + metric(text, "signerkit_pending_handshakes_shed_total", "cap", "total")
	if shed < 40-perHost+12*perHost-total {
		t.Fatalf("%v connections shed", shed)
	}
	took2, err := f.signAs(ctx, "127.0.0.2", f.node, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("validator beside %d silent connections: connected and signed in %v", total, took2)
	if took > time.Second || took2 > time.Second {
		t.Fatalf("the validator took %v and %v to connect and sign", took, took2)
	}
}

// fakeConn is a net.Conn that records its Close.
type fakeConn struct {
	net.Conn
	closed atomic.Bool
}

func (c *fakeConn) Close() error { c.closed.Store(true); return nil }

// TestPendingConnsOrder: over a cap, the connection closed is a
// tarpitted one first, then the oldest of those that sent nothing, then
// the oldest mid-handshake; a newcomer when every other has spoken; the
// per-host cap counts only its host's connections.
func TestPendingConnsOrder(t *testing.T) {
	shed := map[string]prometheus.Counter{capHost: nopCounter{}, capTotal: nopCounter{}, capDescriptors: nopCounter{}}
	tab := newPendingConns(4, 3, nopGauge{}, shed)
	type entry struct {
		c *fakeConn
		p *pendingConn
	}
	add := func(src string) entry {
		c := &fakeConn{}
		return entry{c, tab.admit(c, src)}
	}
	a, b, c := add("a"), add("a"), add("a")
	b.p.first.Store(firstHandshake)
	// a's fourth: a is at its cap; its oldest silent (a) goes.
	d := add("a")
	if !a.c.closed.Load() || b.c.closed.Load() || c.c.closed.Load() || d.p == nil {
		t.Fatal("the per-host cap did not close the oldest silent connection")
	}
	// Another host: the total cap (4) is reached at the next.
	e := add("b")
	c.p.first.Store(firstHandshake)
	d.p.first.Store(firstHandshake)
	e.p.first.Store(firstHandshake)
	// Everyone has spoken: the newcomer goes.
	if f := add("c"); f.p != nil || !f.c.closed.Load() {
		t.Fatal("a silent newcomer displaced a connection mid-handshake")
	}
	// A failed handshake goes before anyone.
	if !tab.failed(c.p) {
		t.Fatal("failed: shed")
	}
	g := add("c")
	if g.p == nil || !c.c.closed.Load() || b.c.closed.Load() {
		t.Fatal("the tarpitted connection was not the one closed")
	}
	select {
	case <-c.p.shedCh:
	default:
		t.Fatal("a shed connection's gone is open")
	}
	if tab.len() != 4 {
		t.Fatalf("%d pending, cap 4", tab.len())
	}
	// Out of descriptors: the silent one, g, then the oldest
	// mid-handshake, b.
	if !tab.shedOne() || !g.c.closed.Load() || b.c.closed.Load() || tab.len() != 3 {
		t.Fatal("shedOne did not close the silent connection")
	}
	if !tab.shedOne() || !b.c.closed.Load() || tab.len() != 2 {
		t.Fatal("shedOne did not close the oldest")
	}
	if !tab.release(b.p) {
		t.Fatal("release of a shed connection")
	}
	if tab.release(d.p) || tab.len() != 1 {
		t.Fatal("release")
	}
}

type nopGauge struct{ prometheus.Gauge }

func (nopGauge) Set(float64) {}

// TestPendingCapsConfig: the defaults, the config's values, and both
// lowered to fit the open-file limit across the TCP listeners.
func TestPendingCapsConfig(t *testing.T) {
	for _, c := range []struct {
		cfg            Config
		nofile         uint64
		listeners      int
		total, perHost int
	}{
		{Config{}, 0, 1, DefaultMaxPendingHandshakes, DefaultMaxPendingHandshakesPerHost},
		{Config{}, 1 << 20, 1, DefaultMaxPendingHandshakes, DefaultMaxPendingHandshakesPerHost},
		{Config{}, 256, 1, 96, 16},
		{Config{}, 256, 2, 48, 16},
		{Config{}, 64, 1, 2, 2},
		{Config{MaxPendingHandshakes: 10, MaxPendingHandshakesPerHost: 20}, 0, 1, 10, 10},
		{Config{MaxPendingHandshakes: 1000, MaxPendingHandshakesPerHost: 4}, 1024, 1, 480, 4},
	} {
		total, perHost := c.cfg.pendingCaps(c.nofile, c.listeners)
		if total != c.total || perHost != c.perHost {
			t.Errorf("%+v at nofile %d, %d listeners: %d, %d; want %d, %d", c.cfg, c.nofile, c.listeners, total, perHost, c.total, c.perHost)
		}
	}
	for _, bad := range []string{"max_pending_handshakes = -1", "max_pending_handshakes_per_host = -1"} {
		data := fmt.Sprintf("state_dir = \"/x\"\n%s\n[[chain]]\nid = \"c\"\nprotocol = %q\nkey = \"inprocess:file=/k\"\n[[chain.validator]]\naddr = \"unix:///s\"\n", bad, ProtocolTM2Remote)
		if _, err := ParseConfig([]byte(data)); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	data := fmt.Sprintf("state_dir = \"/x\"\nmax_pending_handshakes = 64\nmax_pending_handshakes_per_host = 8\n[[chain]]\nid = \"c\"\nprotocol = %q\nkey = \"inprocess:file=/k\"\n[[chain.validator]]\naddr = \"unix:///s\"\n", ProtocolTM2Remote)
	cfg, err := ParseConfig([]byte(data))
	if err != nil || cfg.MaxPendingHandshakes != 64 || cfg.MaxPendingHandshakesPerHost != 8 {
		t.Fatalf("%+v, %v", cfg, err)
	}
}
