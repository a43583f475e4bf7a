package daemon

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/signerkit/signerkit/privval"
)

// Connection admission on a tm2-remote TCP listener.
//
// The node dials signerkit, and so can anyone who reaches the port. Until
// a connection completes its SecretConnection handshake nothing is known
// of it but its source address, and the allowlist is of node identity
// keys, which only the handshake proves (privval.LegacySecretConnection):
// a source address is neither trusted nor blamed on its own, since a
// misbehaving client may share the validator's. So:
//
//  1. Nothing delays a handshake. Every accepted connection starts its
//     handshake at once, so the validator is served as fast as its
//     handshake runs, whatever else its address sends.
//  2. A connection whose handshake failed (garbage, a timeout, an
//     identity not on the allowlist) is held open — tarpitted — before it
//     is closed: 100 ms after its source's first failure in a row,
//     doubling with each further one up to 5 s (handshakeLimiter). A
//     client that waits for the close is paced by it. gno's client,
//     refused, does not wait: it gives up on its side and redials at
//     once, about 1,000 times a second, and each dial costs a handshake —
//     the price of delaying none. A success from the source forgets its
//     failures.
//  3. Connections not yet past their handshake — in it, or tarpitted —
//     are pending, and capped per listener: max_pending_handshakes in all,
//     max_pending_handshakes_per_host from one source (an IPv4 address,
//     an IPv6 /64). A connection beyond a cap is never queued: at once,
//     the pending connection least likely to be the validator's is closed
//     to make room (pendingConns.admit, which runs in the accept loop).
//     That is one that failed its handshake or whose first bytes cannot
//     start one (peeked at in the socket's buffer, before its goroutine
//     reads them), then one that has sent no byte yet, then one in the
//     middle of its handshake; the oldest of its kind. So a newly
//     accepted connection that has sent nothing is closed only when
//     every other has begun a handshake.
//  4. Should Accept still run out of file descriptors, privval.Server
//     backs off (5 ms doubling to 1 s) and first asks shed to close a
//     pending connection, chosen the same way, so that the accept queue,
//     where the validator's connection may wait, keeps draining.
//  5. The caps default to 128 and 16, and are lowered to fit the
//     descriptors the process may open: pending connections of all
//     listeners together take at most half of RLIMIT_NOFILE less 64.
//
// Why a silent or garbage peer cannot starve the validator: such a
// connection holds a slot only until the handshake timeout, its tarpit,
// or the next connection over a cap closes it. The validator's connection
// sends its first handshake message the moment it is connected and
// completes the handshake in a few round trips; it is the youngest of the
// silent connections only until its first bytes arrive, and from then on
// ranks above every silent and tarpitted one. To have it closed, a flood
// must open more than a cap's worth of connections that each send a
// well-formed first handshake message, all within those round trips; a
// flood from the validator's own address has only the per-host cap to do
// it with. A validator whose connection is closed all the same redials,
// as gno's client does.

// Handshake throttling bounds.
const (
	minHandshakeDelay = 100 * time.Millisecond
	maxHandshakeDelay = 5 * time.Second
	maxTrackedHosts   = 1024
)

// handshakeLimiter remembers, per source, the handshakes that failed in a
// row, and says how long to hold (tarpit) a connection whose handshake
// just failed: 100 ms after the first failure, doubling with each further
// failure up to 5 s. It delays no handshake.
//
// At most maxTrackedHosts hosts are tracked. A new failing host beyond
// that evicts one entry: the one with the fewest failures, the least
// recent among those. So hosts that fail once each, from however many
// source addresses, evict one another and never a host that is already
// throttled harder than they are.
type handshakeLimiter struct {
	mu        sync.Mutex
	fails     map[string]*hostFails
	seq       uint64 // orders failures: the higher, the more recent
	throttled prometheus.Counter
}

// hostFails is one tracked host: its failures in a row and when the last
// one happened, as the limiter's seq.
type hostFails struct {
	n    int
	last uint64
}

func newHandshakeLimiter(c prometheus.Counter) *handshakeLimiter {
	return &handshakeLimiter{fails: map[string]*hostFails{}, throttled: c}
}

// delay is how long a connection from host whose handshake failed is
// held: zero for a host with no failure on record.
func (l *handshakeLimiter) delay(host string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.fails[host]
	if e == nil {
		return 0
	}
	d := minHandshakeDelay << min(e.n-1, 16)
	return min(d, maxHandshakeDelay)
}

// tarpit holds a connection from host whose handshake failed (result
// recorded) for its delay, or until ctx ends or gone is closed.
func (l *handshakeLimiter) tarpit(ctx context.Context, host string, gone <-chan struct{}) {
	d := l.delay(host)
	if d == 0 {
		return
	}
	l.throttled.Inc()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	case <-gone:
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
	l.seq++
	e := l.fails[host]
	if e == nil {
		if len(l.fails) >= maxTrackedHosts {
			l.evictOne()
		}
		e = &hostFails{}
		l.fails[host] = e
	}
	e.n++
	e.last = l.seq
}

// evictOne forgets the host with the fewest failures, the least recent
// among those. A linear scan: it runs only when a new host fails with the
// table full, and costs far less than the handshake that failed.
func (l *handshakeLimiter) evictOne() {
	var victim string
	var ve *hostFails
	for h, e := range l.fails {
		if ve == nil || e.n < ve.n || e.n == ve.n && e.last < ve.last {
			victim, ve = h, e
		}
	}
	delete(l.fails, victim)
}

// Defaults of the pending-handshake caps (Config.MaxPendingHandshakes and
// MaxPendingHandshakesPerHost), and the descriptors kept out of their
// reach.
const (
	DefaultMaxPendingHandshakes        = 128
	DefaultMaxPendingHandshakesPerHost = 16
	reservedDescriptors                = 64
)

// Caps a pending connection was closed for (the cap label of
// signerkit_pending_handshakes_shed_total).
const (
	capHost        = "host"
	capTotal       = "total"
	capDescriptors = "descriptors"
)

// errShed is why a pending connection closed to make room ended.
var errShed = errors.New("closed to make room under the pending-handshake cap")

// pendingConn is one connection not yet past its handshake.
type pendingConn struct {
	conn   net.Conn
	source string
	seq    uint64 // admission order
	// first is what the peer's first bytes say: firstNone (none yet),
	// firstHandshake (the start of a handshake message), firstGarbage.
	first  atomic.Int32
	tarpit bool // its handshake failed; under pendingConns.mu
	gone   bool // shed or released; under pendingConns.mu
	shed   bool // closed to make room; under pendingConns.mu
	// shedCh is closed when the connection is shed.
	shedCh chan struct{}
}

// What a pending connection's first bytes say.
const (
	firstNone      = iota // nothing received yet
	firstHandshake        // the start of a SecretConnection handshake
	firstGarbage          // anything else: the handshake will fail
)

// ephemeralPrefix starts the first handshake message of both
// SecretConnection variants: a length of 34, then field 1, 32 bytes (the
// X25519 key).
var ephemeralPrefix = []byte{0x22, 0x0a, 0x20}

// classify says what first bytes b (at least one) are.
func classify(b []byte) int32 {
	if bytes.HasPrefix(ephemeralPrefix, b[:min(len(b), len(ephemeralPrefix))]) {
		return firstHandshake
	}
	return firstGarbage
}

// firstBytes returns what the peer's first bytes say: read already, or
// waiting to be read. Under a flood the handshake's goroutine may not
// have run yet while the validator's first message waits in the socket's
// buffer, so the buffer is peeked at.
func (p *pendingConn) firstBytes() int32 {
	if f := p.first.Load(); f != firstNone {
		return f
	}
	var buf [3]byte
	n := peek(p.conn, buf[:])
	if n == 0 {
		return firstNone
	}
	f := classify(buf[:n])
	p.first.CompareAndSwap(firstNone, f)
	return f
}

// admittedConn is an admitted connection: it records in its pendingConn
// what the first bytes read say.
type admittedConn struct {
	net.Conn
	p *pendingConn
}

func (c *admittedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 && c.p.first.Load() == firstNone {
		c.p.first.CompareAndSwap(firstNone, classify(b[:n]))
	}
	return n, err
}

// pendingConns is a listener's pending connections under its caps.
type pendingConns struct {
	max, maxPerSource int

	mu       sync.Mutex
	n        int            // pending connections
	order    []*pendingConn // by seq; gone ones are dropped lazily
	bySource map[string]int // pending connections by source
	seq      uint64

	gauge prometheus.Gauge
	shed  map[string]prometheus.Counter // by cap
}

func newPendingConns(max, maxPerSource int, gauge prometheus.Gauge, shed map[string]prometheus.Counter) *pendingConns {
	return &pendingConns{max: max, maxPerSource: min(maxPerSource, max), bySource: map[string]int{}, gauge: gauge, shed: shed}
}

// admit records conn from source as pending. When that is beyond a cap,
// the pending connection to close first (lowest) is closed at once —
// among source's alone for the per-source cap — conn itself when that is
// conn; admit then returns nil.
func (t *pendingConns) admit(conn net.Conn, source string) *pendingConn {
	t.mu.Lock()
	t.seq++
	p := &pendingConn{conn: conn, source: source, seq: t.seq, shedCh: make(chan struct{})}
	t.order = append(t.order, p)
	t.n++
	t.bySource[source]++
	var victim *pendingConn
	var which string
	switch {
	case t.bySource[source] > t.maxPerSource:
		victim, which = t.lowest(source), capHost
	case t.n > t.max:
		victim, which = t.lowest(""), capTotal
	}
	if victim != nil {
		t.dropLocked(victim, true)
	}
	t.gauge.Set(float64(t.n))
	t.mu.Unlock()
	if victim != nil {
		t.shed[which].Inc()
		_ = victim.conn.Close()
	}
	if victim == p {
		return nil
	}
	return p
}

// lowest returns the pending connection of source ("": any) to close
// first: the oldest that failed its handshake or whose first bytes
// cannot start one, else the oldest that has sent nothing, else the
// oldest. So the connection just admitted, the newest, is closed only
// when it is silent and no other is, or when it is alone.
func (t *pendingConns) lowest(source string) *pendingConn {
	var silent, oldest *pendingConn
	for _, c := range t.order {
		if c.gone || source != "" && c.source != source {
			continue
		}
		if c.tarpit {
			return c
		}
		switch c.firstBytes() {
		case firstGarbage:
			return c
		case firstNone:
			if silent == nil {
				silent = c
			}
		}
		if oldest == nil {
			oldest = c
		}
	}
	if silent != nil {
		return silent
	}
	return oldest
}

// dropLocked forgets p, marking it shed when shed is set (its caller
// then closes its conn).
func (t *pendingConns) dropLocked(p *pendingConn, shed bool) {
	if p.gone {
		return
	}
	p.gone = true
	if shed {
		p.shed = true
		close(p.shedCh)
	}
	t.n--
	if t.bySource[p.source]--; t.bySource[p.source] <= 0 {
		delete(t.bySource, p.source)
	}
	if len(t.order) > 64 && len(t.order) > 2*t.n {
		live := t.order[:0]
		for _, c := range t.order {
			if !c.gone {
				live = append(live, c)
			}
		}
		clear(t.order[len(live):])
		t.order = live
	}
}

// shedOne closes the pending connection to close first, for want of file
// descriptors; it reports whether there was one.
func (t *pendingConns) shedOne() bool {
	t.mu.Lock()
	var victim *pendingConn
	if t.n > 0 {
		victim = t.lowest("")
		t.dropLocked(victim, true)
		t.gauge.Set(float64(t.n))
	}
	t.mu.Unlock()
	if victim == nil {
		return false
	}
	t.shed[capDescriptors].Inc()
	_ = victim.conn.Close()
	return true
}

// failed marks p as tarpitted; it reports false when p was shed already.
func (t *pendingConns) failed(p *pendingConn) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	p.tarpit = true
	return !p.shed
}

// release forgets p, past its handshake or closed; it reports whether p
// had been shed.
func (t *pendingConns) release(p *pendingConn) (wasShed bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p.shed {
		return true
	}
	t.dropLocked(p, false)
	t.gauge.Set(float64(t.n))
	return false
}

// len returns the number of pending connections.
func (t *pendingConns) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n
}

// admission is a listener's handshake policy: its pending connections'
// caps and the tarpit of failed handshakes, and the counting and logging
// of its Accept errors.
type admission struct {
	tcp     bool // caps and tarpit apply: a TCP listener
	pending *pendingConns
	limiter *handshakeLimiter
	log     *slog.Logger

	acceptErrors prometheus.Counter
	acceptLog    logLimit // Accept errors: a line a second at most
}

// newAdmission makes the admission of the tm2-remote listener of chain
// and validator addr on network, its caps from the config, lowered to
// fit the process's descriptors when they would not (logged). The caps
// apply to TCP listeners; a Unix socket has no handshake to wait for.
func (d *Daemon) newAdmission(chain, addr, network string, log *slog.Logger) *admission {
	listeners := 0
	for _, ch := range d.cfg.Chains {
		for _, v := range ch.Validators {
			if n, _, err := v.Network(); err == nil && n == "tcp" && ch.Protocol == ProtocolTM2Remote {
				listeners++
			}
		}
	}
	total, perHost := d.cfg.pendingCaps(openFileLimit(), listeners)
	if want, _ := d.cfg.pendingCaps(0, 0); total < want && network == "tcp" {
		log.Warn("max_pending_handshakes lowered to fit the open-file limit (RLIMIT_NOFILE); raise LimitNOFILE to keep it",
			"max_pending_handshakes", total, "configured", want, "nofile", openFileLimit())
	}
	shed := map[string]prometheus.Counter{}
	for _, c := range []string{capHost, capTotal, capDescriptors} {
		shed[c] = d.m.pendingShed.WithLabelValues(chain, addr, c)
	}
	return &admission{
		tcp:          network == "tcp",
		pending:      newPendingConns(total, perHost, d.m.pending.WithLabelValues(chain, addr), shed),
		limiter:      newHandshakeLimiter(d.m.throttled.WithLabelValues(chain, addr)),
		log:          log,
		acceptErrors: d.m.acceptErrors.WithLabelValues(chain, addr),
	}
}

// pendingCaps returns the pending-handshake caps of each of listeners
// TCP listeners: the config's (or the defaults), lowered so that together
// they take at most half of nofile less reservedDescriptors. nofile 0
// means no limit.
func (c *Config) pendingCaps(nofile uint64, listeners int) (total, perHost int) {
	total, perHost = c.MaxPendingHandshakes, c.MaxPendingHandshakesPerHost
	if total <= 0 {
		total = DefaultMaxPendingHandshakes
	}
	if perHost <= 0 {
		perHost = DefaultMaxPendingHandshakesPerHost
	}
	if nofile > 0 && listeners > 0 {
		budget := 2
		if nofile > reservedDescriptors+4 {
			budget = max(int(min(nofile, 1<<20)-reservedDescriptors)/2/listeners, 2)
		}
		total = min(total, budget)
	}
	return total, min(perHost, total)
}

// accept admits conn, just accepted, under the caps
// (privval.ServerConfig.Admit): it returns the connection to serve, or
// nil when conn was closed at once. It runs in the accept loop, so that
// a flood's connections are counted as fast as they are accepted, not
// when their goroutines get to run.
func (a *admission) accept(conn net.Conn) net.Conn {
	if !a.tcp {
		return conn
	}
	p := a.pending.admit(conn, sourceKey(conn))
	if p == nil {
		return nil
	}
	return &admittedConn{Conn: conn, p: p}
}

// handshake runs h on conn, which accept admitted: at once, never
// delayed. A failure is recorded and the connection tarpitted before it
// is closed.
func (a *admission) handshake(ctx context.Context, conn net.Conn, h privval.Handshake) (net.Conn, ed25519.PublicKey, error) {
	ac, ok := conn.(*admittedConn)
	if !ok { // not through accept: admit it here
		c := a.accept(conn)
		if c == nil {
			return nil, nil, &handshakeError{errShed}
		}
		if ac, ok = c.(*admittedConn); !ok {
			return nil, nil, &handshakeError{errors.New("admission: not a TCP listener")}
		}
	}
	p, source := ac.p, ac.p.source
	sc, peer, err := h(ctx, ac)
	if err == nil {
		if a.pending.release(p) {
			// Shed as it completed: the connection is closed.
			_ = sc.Close()
			return nil, peer, &handshakeError{errShed}
		}
		a.limiter.result(source, true)
		return sc, peer, nil
	}
	if !a.pending.failed(p) {
		return nil, peer, &handshakeError{errShed}
	}
	a.limiter.result(source, false)
	a.limiter.tarpit(ctx, source, p.shedCh)
	a.pending.release(p)
	return nil, peer, &handshakeError{err}
}

// acceptError counts a temporary Accept error (privval.ServerConfig.
// OnAcceptError) and logs it, at most once a second.
func (a *admission) acceptError(err error, wait time.Duration) {
	a.acceptErrors.Inc()
	ok, quiet := a.acceptLog.allow()
	if !ok {
		return
	}
	a.log.Warn("accept failed; retrying (a connection flood, or the open-file limit too low?)",
		"err", err, "retry_in", wait, "unlogged_since_last", quiet, "pending_handshakes", a.pending.len())
}

// shed closes a pending connection for want of file descriptors
// (privval.ServerConfig.Shed).
func (a *admission) shed() bool { return a.pending.shedOne() }

// sourceKey is the source a connection's caps and failures are counted
// by: its IPv4 address, or its IPv6 /64 (one host's usual allotment).
func sourceKey(conn net.Conn) string {
	host := remoteHost(conn)
	ip := net.ParseIP(host)
	if ip == nil || ip.To4() != nil {
		return host
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}
