package cggmp21

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"

	"github.com/signerkit/signerkit/netshape"
	"github.com/signerkit/signerkit/threshold/thresholdtest"
	"github.com/taurusgroup/multi-party-sig/pkg/party"
	"github.com/taurusgroup/multi-party-sig/pkg/protocol"
)

// IDs are the parties' identifiers, participant i+1 being IDs[i].
var IDs = party.IDSlice{"1", "2", "3"}

// headerBytes are the IPv4 and TCP (with timestamps) header bytes of a
// segment, which the wire figures add to the bytes under TLS.
const headerBytes = 52

// Placement puts the three parties on hosts of a netshape profile.
type Placement struct {
	Profile *netshape.Profile
	Hosts   [3]string // participant i+1's host
}

// PlacementOn places the parties on p: on hosts of their own, every pair
// the profile's default round trip apart, or, for netshape's Trio, in
// Frankfurt, Gävle and Virginia.
func PlacementOn(p *netshape.Profile) Placement {
	if p.Name == netshape.Trio().Name {
		return Placement{p, [3]string{netshape.GermanyWestCentral, netshape.SwedenCentral, netshape.EastUS}}
	}
	return Placement{p, [3]string{"party-1", "party-2", "party-3"}}
}

// Traffic is what the Mesh's connections carried, both directions, each
// byte counted once.
type Traffic struct {
	Payload int64 // frame bodies: the library's messages and the sign requests
	TLS     int64 // bytes under TLS: frames, TLS records and handshakes
	Wire    int64 // TLS plus TCP/IP headers, 52 bytes a segment
}

// Sub returns t less u.
func (t Traffic) Sub(u Traffic) Traffic {
	return Traffic{t.Payload - u.Payload, t.TLS - u.TLS, t.Wire - u.Wire}
}

// Mesh runs three parties in one process, each pair joined by one
// mutual-TLS 1.3 connection over loopback, shaped by netshape at the
// dialing end as the Placement puts its two parties. It is safe for
// concurrent use: many sessions run at once.
type Mesh struct {
	place   Placement
	nodes   [3]*node
	payload atomic.Int64
	session atomic.Uint64
	done    chan struct{} // closed by Close
	wg      sync.WaitGroup
	close   sync.Once

	mu     sync.Mutex
	shaped []*netshape.Conn // the dialing ends, which count the traffic
}

// ErrClosed is returned by a session the Mesh's Close ended.
var ErrClosed = errors.New("cggmp21: mesh closed")

// node is one party: its connections and the sessions it takes part in.
type node struct {
	m     *Mesh
	index int
	out   [3]chan []byte // frames to each peer, written by one goroutine a connection
	conns [3]net.Conn

	mu       sync.Mutex
	sessions map[uint64]*inbox
	// onRequest starts the party's side of a session a peer asks for.
	onRequest func(n *node, from int, session uint64, body []byte)
	err       error // the first connection or frame error
}

// inbox holds the messages of one session for one party until its handler
// takes them.
type inbox struct {
	ch   chan *protocol.Message
	done bool
}

// NewMesh connects three parties placed as p.
func NewMesh(p Placement) (*Mesh, error) {
	ca, err := thresholdtest.NewCA()
	if err != nil {
		return nil, err
	}
	m := &Mesh{place: p, done: make(chan struct{})}
	var lns [3]net.Listener
	defer func() {
		for _, l := range lns {
			if l != nil {
				l.Close()
			}
		}
	}()
	cfgs := [3]*tls.Config{}
	for i := range m.nodes {
		m.nodes[i] = &node{m: m, index: i, sessions: map[uint64]*inbox{}}
		cert, err := ca.PeerCert(hostName(i))
		if err != nil {
			return nil, err
		}
		cfgs[i] = &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: ca.Pool(), ClientCAs: ca.Pool(),
			ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS13}
		if lns[i], err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return nil, err
		}
	}
	// Participant i dials each j > i; j accepts i-1 connections.
	errc := make(chan error, 6)
	for j := range 3 {
		for range j {
			go func() { errc <- m.accept(lns[j], cfgs[j], j) }()
		}
		for i := range j {
			go func() { errc <- m.dial(lns[j].Addr().String(), cfgs[i], i, j) }()
		}
	}
	for range 6 {
		if e := <-errc; e != nil && err == nil {
			err = e
		}
	}
	if err != nil {
		m.Close()
		return nil, err
	}
	for _, n := range m.nodes {
		for j, c := range n.conns {
			if c != nil {
				m.start(n, j, c)
			}
		}
	}
	return m, nil
}

func hostName(i int) string { return fmt.Sprintf("party-%d", i+1) }

// dial connects participant i+1 to j+1, shaping the connection.
func (m *Mesh) dial(addr string, cfg *tls.Config, i, j int) error {
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	sc, err := netshape.Wrap(raw, m.place.Profile.Link(m.place.Hosts[i], m.place.Hosts[j]))
	if err != nil {
		raw.Close()
		return err
	}
	c := cfg.Clone()
	c.ServerName = hostName(j)
	tc := tls.Client(sc, c)
	if err := tc.Handshake(); err != nil {
		tc.Close()
		return err
	}
	m.mu.Lock()
	m.nodes[i].conns[j] = tc
	m.shaped = append(m.shaped, sc)
	m.mu.Unlock()
	return nil
}

// accept takes one connection to participant j+1 and files it under the
// peer its client certificate names.
func (m *Mesh) accept(l net.Listener, cfg *tls.Config, j int) error {
	raw, err := l.Accept()
	if err != nil {
		return err
	}
	tc := tls.Server(raw, cfg)
	if err := tc.Handshake(); err != nil {
		tc.Close()
		return err
	}
	peer := -1
	if certs := tc.ConnectionState().PeerCertificates; len(certs) > 0 {
		for i := range j {
			if certs[0].Subject.CommonName == hostName(i) {
				peer = i
			}
		}
	}
	if peer < 0 {
		tc.Close()
		return fmt.Errorf("cggmp21: participant %d accepted a connection from no lower participant", j+1)
	}
	n := m.nodes[j]
	m.mu.Lock()
	defer m.mu.Unlock()
	if n.conns[peer] != nil {
		tc.Close()
		return fmt.Errorf("cggmp21: participant %d: a second connection from participant %d", j+1, peer+1)
	}
	n.conns[peer] = tc
	return nil
}

// start runs the writer and the reader of n's connection to peer j.
func (m *Mesh) start(n *node, j int, c net.Conn) {
	n.out[j] = make(chan []byte, 256)
	m.wg.Add(2)
	go func() {
		defer m.wg.Done()
		for {
			select {
			case b := <-n.out[j]:
				if _, err := c.Write(b); err != nil {
					n.fail(err)
					return
				}
			case <-m.done:
				return
			}
		}
	}()
	go func() {
		defer m.wg.Done()
		for {
			f, err := readFrame(c)
			if err != nil {
				if !errors.Is(err, net.ErrClosed) {
					n.fail(err)
				}
				return
			}
			if err := n.receive(j, f); err != nil {
				n.fail(err)
				return
			}
		}
	}()
}

// fail records n's first error.
func (n *node) fail(err error) {
	n.mu.Lock()
	if n.err == nil {
		n.err = err
	}
	n.mu.Unlock()
}

// receive files a frame from peer j.
func (n *node) receive(j int, f frame) error {
	switch f.kind {
	case kindRequest:
		n.mu.Lock()
		start := n.onRequest
		n.mu.Unlock()
		if start == nil {
			return fmt.Errorf("%w: participant %d asked participant %d to sign, which serves no requests", ErrFrame, j+1, n.index+1)
		}
		start(n, j, f.session, f.body)
		return nil
	default:
		msg, err := decodeMessage(f.body, string(IDs[j]))
		if err != nil {
			return err
		}
		if ib := n.inbox(f.session); ib != nil {
			ib.ch <- msg
		}
		return nil
	}
}

// inbox returns the session's inbox, made on first use, or nil once the
// session is over at n.
func (n *node) inbox(session uint64) *inbox {
	n.mu.Lock()
	defer n.mu.Unlock()
	ib, ok := n.sessions[session]
	if !ok {
		// A session has a few messages a round from each peer: the
		// buffer never fills while its handler runs.
		ib = &inbox{ch: make(chan *protocol.Message, 64)}
		n.sessions[session] = ib
	}
	if ib.done {
		return nil
	}
	return ib
}

// finish marks the session over at n; later messages of it are dropped.
func (n *node) finish(session uint64) {
	n.mu.Lock()
	n.sessions[session] = &inbox{done: true}
	n.mu.Unlock()
}

// send sends a frame to peer j, counting its body as payload.
func (n *node) send(j int, f frame) {
	n.m.payload.Add(int64(len(f.body)))
	select {
	case n.out[j] <- appendFrame(nil, f):
	case <-n.m.done:
	}
}

// run runs n's side of a session among the participants (indexes) until
// its handler ends, and returns the handler's result.
func (n *node) run(ctx context.Context, session uint64, participants []int, start protocol.StartFunc) (any, error) {
	ib := n.inbox(session)
	defer n.finish(session)
	if ib == nil {
		return nil, fmt.Errorf("cggmp21: participant %d: session %d is over", n.index+1, session)
	}
	sid := sessionID(session)
	h, err := protocol.NewMultiHandler(start, sid)
	if err != nil {
		return nil, err
	}
	for {
		select {
		case msg, ok := <-h.Listen():
			if !ok {
				return h.Result()
			}
			body, err := msg.MarshalBinary()
			if err != nil {
				h.Stop()
				return nil, err
			}
			for _, j := range participants {
				if j != n.index && (msg.To == "" || msg.To == IDs[j]) {
					n.send(j, frame{session: session, kind: kindMessage, body: body})
				}
			}
		case msg := <-ib.ch:
			h.Accept(msg)
		case <-ctx.Done():
			h.Stop()
			return nil, fmt.Errorf("cggmp21: participant %d: %w (connection error: %v)", n.index+1, ctx.Err(), n.error())
		case <-n.m.done:
			h.Stop()
			return nil, ErrClosed
		}
	}
}

func (n *node) error() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.err
}

// sessionID is the library's session identifier of the Mesh's session s.
func sessionID(s uint64) []byte {
	return fmt.Appendf(nil, "signerkit-cggmp21-bench/%d", s)
}

// newSession returns a session number not used before on m.
func (m *Mesh) newSession() uint64 { return m.session.Add(1) }

// Traffic returns what the connections have carried so far.
func (m *Mesh) Traffic() Traffic {
	t := Traffic{Payload: m.payload.Load()}
	for _, c := range m.shaped {
		s := c.Stats()
		t.TLS += s.Out.Bytes + s.In.Bytes
		t.Wire += s.Out.WireBytes(headerBytes) + s.In.WireBytes(headerBytes)
	}
	return t
}

// RTT returns the round trip between participants a and b (1 … 3).
func (m *Mesh) RTT(a, b int) float64 {
	return float64(m.place.Profile.RTT(m.place.Hosts[a-1], m.place.Hosts[b-1]).Microseconds()) / 1e3
}

// Close closes the connections and waits for their goroutines.
func (m *Mesh) Close() error {
	m.close.Do(func() {
		close(m.done)
		for _, n := range m.nodes {
			for _, c := range n.conns {
				if c != nil {
					c.Close()
				}
			}
		}
		m.wg.Wait()
	})
	return nil
}
