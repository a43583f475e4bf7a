package thresholdbench

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signerkit/signerkit/netshape"
	"github.com/signerkit/signerkit/threshold/frost"
	"github.com/signerkit/signerkit/threshold/thresholdtest"
)

// Package threshold has no networked key generation, so the DKG row over
// the network runs frost's DKG here: three participants, each pair joined
// by one mutual-TLS 1.3 connection shaped as the placement says (the
// participant with the lower identifier dials), round 1 broadcast to both
// others and round 2 sent to each, as the FROST paper's DKG runs over
// authenticated, confidential channels. Frames are a 2-byte length and a
// frost encoding.

// dkgMesh is the three participants' connections: conns[i][j] is i's
// connection to j (identifiers i+1, j+1).
type dkgMesh struct {
	conns   [3][3]*dkgConn
	shaped  []*netshape.Conn
	payload atomic.Uint64
	tlsB    atomic.Uint64
}

type dkgConn struct {
	c *tls.Conn
	r *bufio.Reader
}

type countConn struct {
	net.Conn
	n *atomic.Uint64
}

func (c countConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(uint64(n))
	return n, err
}

func (c countConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.n.Add(uint64(n))
	return n, err
}

// connectMesh joins the participants placed on hosts. Certificates come
// from a thresholdtest CA.
func connectMesh(ctx context.Context, p *netshape.Profile, hosts [3]string) (*dkgMesh, func(), error) {
	ca, err := thresholdtest.NewCA()
	if err != nil {
		return nil, nil, err
	}
	s := &meshSetup{ca: ca, m: &dkgMesh{}, acc: make(chan meshAccept, 3)}
	err = s.listen()
	if err == nil {
		err = s.serve(ctx)
	}
	if err == nil {
		err = s.dial(ctx, p, hosts)
	}
	if err == nil {
		err = s.accept()
	}
	if err != nil {
		s.close()
		return nil, nil, err
	}
	s.m.tlsB.Store(0)
	return s.m, s.close, nil
}

// meshSetup is connectMesh at work: the mesh it fills, each participant's
// listener, the connections its accepters hand over, and what close
// closes.
type meshSetup struct {
	ca      *thresholdtest.CA
	m       *dkgMesh
	lns     [3]net.Listener
	acc     chan meshAccept
	closers []io.Closer
}

// meshAccept is a connection participant j accepted, past its TLS
// handshake, or why not.
type meshAccept struct {
	j    int
	conn *tls.Conn
	err  error
}

// meshName is participant i's name in its certificate.
func meshName(i int) string { return fmt.Sprintf("dkg-%d", i+1) }

// close closes everything the setup opened, together: a shaped
// connection's Close waits to deliver its TLS close across the emulated
// link.
func (s *meshSetup) close() {
	var wg sync.WaitGroup
	for _, c := range s.closers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Close()
		}()
	}
	wg.Wait()
}

// listen makes each participant's listener.
func (s *meshSetup) listen() error {
	for j := range 3 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		s.closers = append(s.closers, ln)
		s.lns[j] = ln
	}
	return nil
}

// serve starts each participant's accepter: participant j accepts one
// connection from each participant before it, with a server certificate
// and a client certificate required.
func (s *meshSetup) serve(ctx context.Context) error {
	for j := range 3 {
		srv, err := s.ca.Cert(meshName(j), false)
		if err != nil {
			return err
		}
		conf := &tls.Config{Certificates: []tls.Certificate{srv}, ClientCAs: s.ca.Pool(),
			ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS13,
			SessionTicketsDisabled: true} // no tickets arriving during the first DKG
		go func() {
			for range j { // participants 1 … j dial j+1
				raw, err := s.lns[j].Accept()
				if err != nil {
					s.acc <- meshAccept{j: j, err: err}
					return
				}
				// Counted at the dialing end only, which sees both
				// directions.
				c := tls.Server(raw, conf)
				err = c.HandshakeContext(ctx)
				s.acc <- meshAccept{j: j, conn: c, err: err}
			}
		}()
	}
	return nil
}

// dial connects each participant to those after it over the link the
// placement gives, counting the TLS bytes, and says who dialed.
func (s *meshSetup) dial(ctx context.Context, p *netshape.Profile, hosts [3]string) error {
	for i := range 3 {
		cli, err := s.ca.Cert(meshName(i), true)
		if err != nil {
			return err
		}
		for j := i + 1; j < 3; j++ {
			raw, err := netshape.Dialer(p.Link(hosts[i], hosts[j]), nil)(ctx, "tcp", s.lns[j].Addr().String())
			if err != nil {
				return err
			}
			s.m.shaped = append(s.m.shaped, raw.(*netshape.Conn))
			conf := &tls.Config{Certificates: []tls.Certificate{cli}, RootCAs: s.ca.Pool(), ServerName: meshName(j), MinVersion: tls.VersionTLS13}
			c := tls.Client(countConn{raw, &s.m.tlsB}, conf)
			s.closers = append(s.closers, c)
			// The client's handshake ends before the server's reads the
			// client's certificate; the server's side is awaited in accept.
			if err := c.HandshakeContext(ctx); err != nil {
				return err
			}
			// Tell j who dialed: one byte, the dialer's index.
			if _, err := c.Write([]byte{byte(i)}); err != nil {
				return err
			}
			s.m.conns[i][j] = &dkgConn{c: c, r: bufio.NewReader(c)}
		}
	}
	return nil
}

// accept awaits the accepted connections and puts each in the mesh under
// the dialer its hello names.
func (s *meshSetup) accept() error {
	for range 3 { // participant 2 accepts one connection, participant 3 two
		a := <-s.acc
		if a.err != nil {
			return a.err
		}
		s.closers = append(s.closers, a.conn)
		r := bufio.NewReader(a.conn)
		who, err := r.ReadByte()
		if err != nil || int(who) >= a.j {
			return fmt.Errorf("thresholdbench: DKG mesh: bad hello from a peer of %d: %v", a.j+1, err)
		}
		s.m.conns[a.j][who] = &dkgConn{c: a.conn, r: r}
	}
	return nil
}

func (c *dkgConn) send(m *dkgMesh, body []byte) error {
	b := binary.BigEndian.AppendUint16(make([]byte, 0, 2+len(body)), uint16(len(body)))
	m.payload.Add(uint64(len(body)))
	_, err := c.c.Write(append(b, body...))
	return err
}

func (c *dkgConn) recv() ([]byte, error) {
	var h [2]byte
	if _, err := io.ReadFull(c.r, h[:]); err != nil {
		return nil, err
	}
	b := make([]byte, binary.BigEndian.Uint16(h[:]))
	_, err := io.ReadFull(c.r, b)
	return b, err
}

// participant runs participant i's (identifier i+1) side of one DKG.
func (m *dkgMesh) participant(i int) (*frost.KeyPackage, *frost.PublicKeyPackage, error) {
	id := frost.Identifier(i + 1)
	d, r1, err := frost.NewDKG(id, 2, 3, rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	enc, err := r1.AppendBinary(nil)
	if err != nil {
		return nil, nil, err
	}
	var peers []int
	for j := range 3 {
		if j != i {
			peers = append(peers, j)
		}
	}
	for _, j := range peers {
		if err := m.conns[i][j].send(m, enc); err != nil {
			return nil, nil, err
		}
	}
	var others []*frost.DKGRound1
	for _, j := range peers {
		b, err := m.conns[i][j].recv()
		if err != nil {
			return nil, nil, err
		}
		r, err := frost.ParseDKGRound1(b)
		if err != nil {
			return nil, nil, err
		}
		if r.ID != frost.Identifier(j+1) {
			return nil, nil, fmt.Errorf("thresholdbench: participant %d sent round 1 as %d", j+1, r.ID)
		}
		others = append(others, r)
	}
	out, err := d.Round2(others)
	if err != nil {
		return nil, nil, err
	}
	for _, r2 := range out {
		enc, err := r2.AppendBinary(nil)
		if err != nil {
			return nil, nil, err
		}
		if err := m.conns[i][int(r2.To)-1].send(m, enc); err != nil {
			return nil, nil, err
		}
	}
	var received []*frost.DKGRound2
	for _, j := range peers {
		b, err := m.conns[i][j].recv()
		if err != nil {
			return nil, nil, err
		}
		r, err := frost.ParseDKGRound2(b)
		if err != nil {
			return nil, nil, err
		}
		if r.From != frost.Identifier(j+1) || r.To != id {
			return nil, nil, fmt.Errorf("thresholdbench: participant %d sent a round-2 share from %d to %d", j+1, r.From, r.To)
		}
		received = append(received, r)
	}
	return d.Finish(received)
}

// run runs one DKG on the mesh and returns how long it took and the
// participants' keys.
func (m *dkgMesh) run() (time.Duration, []*frost.KeyPackage, []*frost.PublicKeyPackage, error) {
	var wg sync.WaitGroup
	keys := make([]*frost.KeyPackage, 3)
	pubs := make([]*frost.PublicKeyPackage, 3)
	errs := make([]error, 3)
	start := time.Now()
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			keys[i], pubs[i], errs[i] = m.participant(i)
		}()
	}
	wg.Wait()
	took := time.Since(start)
	return took, keys, pubs, errors.Join(errs...)
}

// checkKeys checks that a DKG's participants agree on the group key and
// that participants 1 and 3 sign with it.
func checkKeys(keys []*frost.KeyPackage, pubs []*frost.PublicKeyPackage) error {
	defer func() {
		for _, k := range keys {
			k.Wipe()
		}
	}()
	gk := pubs[0].GroupPublicKey()
	for i := range keys {
		if !bytes.Equal(pubs[i].GroupPublicKey(), gk) || !bytes.Equal(keys[i].GroupPublicKey(), gk) {
			return errors.New("thresholdbench: the DKG's participants disagree on the group key")
		}
	}
	msg := Message(1)
	signers := []*frost.KeyPackage{keys[0], keys[2]}
	var nonces []*frost.SigningNonces
	var list []frost.SigningCommitments
	for _, k := range signers {
		n, err := frost.Commit(k, rand.Reader)
		if err != nil {
			return err
		}
		nonces = append(nonces, n)
		list = append(list, n.Commitments())
	}
	frost.SortCommitments(list)
	var shares []frost.SignatureShare
	for i, k := range signers {
		sh, err := frost.Sign(k, nonces[i], msg, list)
		if err != nil {
			return err
		}
		shares = append(shares, sh)
	}
	sig, err := frost.Aggregate(pubs[0], msg, list, shares)
	if err != nil {
		return err
	}
	if !ed25519.Verify(gk, msg, sig) {
		return errors.New("thresholdbench: a signature by the DKG's key does not verify with crypto/ed25519")
	}
	return nil
}

// DKGNet is the key generation row over the network: a 2-of-3 DKG among
// three participants placed on n's party hosts (for Trio, Frankfurt, Gävle
// and Virginia), on connections made and handshaken before the clock
// starts. Each op is one whole DKG, two rounds each one message latency
// long, so it takes about the largest round trip between two participants.
// After each the participants' keys are checked, with the clock stopped: one group key,
// and a signature by two of them verified with crypto/ed25519.
//
// Metrics: p50-ms and p99-ms; connect-ms, the time to connect the three
// pairs (TCP and TLS, sequentially, once per row: BenchmarkThreshold keeps
// a row's mesh for the runs of b.N that follow its first; DKGNet connects
// once per call); cpu-ms/op, all three
// participants; payload-B/op (frame bodies), tls-B/op and wire-B/op (with
// 52 bytes of TCP/IP headers per segment), all pairs and directions.
func DKGNet(b *testing.B, n Network) {
	var mesh dkgRowMesh
	defer mesh.close()
	dkgNet(b, n, &mesh)
}

// dkgRowMesh is the mesh of a DKG row, connected in its first run and
// kept for the runs that follow (a row runs its function once per b.N
// it tries); close closes it after the row.
type dkgRowMesh struct {
	m       *dkgMesh
	cleanup func()
	connect time.Duration
	err     error // of connecting
}

// connectMesh connects r's mesh on n, timing it.
func (r *dkgRowMesh) connectMesh(n Network) {
	t0 := time.Now()
	r.m, r.cleanup, r.err = connectMesh(context.Background(), n.Profile, n.Parties)
	r.connect = time.Since(t0)
}

func (r *dkgRowMesh) close() {
	if r.cleanup != nil {
		r.cleanup()
	}
	*r = dkgRowMesh{}
}

// dkgNet is DKGNet on the mesh of r, which it connects if r has none.
func dkgNet(b *testing.B, n Network, r *dkgRowMesh) {
	if r.m == nil && r.err == nil {
		r.connectMesh(n)
	}
	if r.err != nil {
		b.Fatal(r.err)
	}
	m := r.m
	wire0, payload0, tls0 := m.wire(), m.payload.Load(), m.tlsB.Load()
	var lat []time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	var cpu time.Duration
	ok := true
	for range b.N {
		c0, cok := cpuTime()
		took, keys, pubs, err := m.run()
		c1, _ := cpuTime()
		cpu += c1 - c0
		ok = ok && cok
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, took)
		b.StopTimer()
		if err := checkKeys(keys, pubs); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.StopTimer()
	slices.Sort(lat)
	l := Load{Latency: lat}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(l.Percentile(0.5)), "p50-ms")
	b.ReportMetric(ms(l.Percentile(0.99)), "p99-ms")
	b.ReportMetric(ms(r.connect), "connect-ms")
	if ok {
		b.ReportMetric(ms(cpu)/float64(b.N), "cpu-ms/op")
	}
	b.ReportMetric(float64(m.payload.Load()-payload0)/float64(b.N), "payload-B/op")
	b.ReportMetric(float64(m.tlsB.Load()-tls0)/float64(b.N), "tls-B/op")
	b.ReportMetric(float64(m.wire()-wire0)/float64(b.N), "wire-B/op")
}

// wire returns the bytes on the emulated wire of every connection, both
// directions, with 52 bytes of headers per segment.
func (m *dkgMesh) wire() int64 {
	var w int64
	for _, c := range m.shaped {
		s := c.Stats()
		w += s.Out.WireBytes(52) + s.In.WireBytes(52)
	}
	return w
}
