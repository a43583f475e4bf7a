package etcdtest

import (
	"net"
	"sync"
	"testing"
	"time"
)

// Proxy is a TCP proxy in front of one member: Pass forwards, Drop holds
// new and open connections without forwarding a byte (a partition whose
// packets are dropped), Delay forwards each chunk late.
type Proxy struct {
	Addr   string // where clients connect
	target string
	l      net.Listener

	mu    sync.Mutex
	mode  int // 0 pass, 1 drop
	delay time.Duration
	conns map[net.Conn]bool
	gate  chan struct{} // closed while passing
}

// NewProxy starts a proxy to target; it closes when t ends.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{Addr: l.Addr().String(), target: target, l: l, conns: map[net.Conn]bool{}, gate: make(chan struct{})}
	close(p.gate)
	go p.serve()
	t.Cleanup(p.Close)
	return p
}

// Pass forwards again, without delay.
func (p *Proxy) Pass() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delay = 0
	if p.mode == 1 {
		p.mode = 0
		close(p.gate)
	}
}

// Drop stops forwarding: bytes already sent or sent later wait until
// Pass, connections stay open, and the client sees nothing.
func (p *Proxy) Drop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mode == 0 {
		p.mode = 1
		p.gate = make(chan struct{})
	}
}

// Delay forwards each chunk d late.
func (p *Proxy) Delay(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delay = d
}

// Reset closes every open connection (a link that broke).
func (p *Proxy) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}

// Close stops the proxy and closes its connections.
func (p *Proxy) Close() {
	p.l.Close()
	p.Pass()
	p.Reset()
}

func (p *Proxy) serve() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		go p.handle(c)
	}
}

func (p *Proxy) track(c net.Conn, on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if on {
		p.conns[c] = true
	} else {
		delete(p.conns, c)
	}
}

func (p *Proxy) handle(c net.Conn) {
	p.track(c, true)
	defer p.track(c, false)
	defer c.Close()
	p.wait()
	u, err := net.DialTimeout("tcp", p.target, time.Second)
	if err != nil {
		return
	}
	p.track(u, true)
	defer p.track(u, false)
	defer u.Close()
	go p.pump(c, u)
	p.pump(u, c)
}

// wait blocks while the proxy drops, and returns the delay to apply.
func (p *Proxy) wait() time.Duration {
	p.mu.Lock()
	gate, d := p.gate, p.delay
	p.mu.Unlock()
	<-gate
	return d
}

func (p *Proxy) pump(dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if d := p.wait(); d > 0 {
				time.Sleep(d)
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
