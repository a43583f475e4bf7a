package dklsbench

import (
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signerkit/signerkit/internal/thresholdbench"
	"github.com/signerkit/signerkit/netshape"
	"github.com/signerkit/signerkit/threshold/dkls23"
)

// presignLink is a TLS connection between the two signing parties, shaped
// at party 1's end as the network places them.
type presignLink struct {
	c1, c2  net.Conn
	counter netshape.Counter
	payload atomic.Uint64
}

// newPresignLink connects party 1 to party 2 over TLS 1.3 through
// netshape.
func newPresignLink(n thresholdbench.Network) (*presignLink, error) {
	cert, pool, err := selfSigned()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	defer ln.Close()
	l := &presignLink{}
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			accepted <- nil
			return
		}
		accepted <- tls.Server(c, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13})
	}()
	link := n.Profile.Link(n.Parties[0], n.Parties[1])
	link.Counter = &l.counter
	raw, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return nil, err
	}
	shaped, err := netshape.Wrap(raw, link)
	if err != nil {
		raw.Close()
		return nil, err
	}
	l.c1 = tls.Client(shaped, &tls.Config{RootCAs: pool, ServerName: "party", MinVersion: tls.VersionTLS13})
	if l.c2 = <-accepted; l.c2 == nil {
		l.c1.Close()
		return nil, errors.New("dklsbench: accept failed")
	}
	return l, nil
}

func (l *presignLink) close() {
	l.c1.Close()
	l.c2.Close()
}

// presign runs one presigning of {1, 2} across the link, each party in
// its own goroutine.
func (l *presignLink) presign(shares []*dkls23.Share, sid []byte) error {
	errs := make(chan error, 1)
	go func() { errs <- l.party(shares[1], sid, l.c2, 1) }()
	err := l.party(shares[0], sid, l.c1, 2)
	return errors.Join(err, <-errs)
}

// party is one party's presigning with peer over c: each round's message
// is written while the peer's is read.
func (l *presignLink) party(share *dkls23.Share, sid []byte, c net.Conn, peer int) error {
	p, out, err := dkls23.NewPresign(share, sid, Signers, rand.Reader)
	if err != nil {
		return err
	}
	in, err := l.exchange(c, out[peer])
	if err != nil {
		return err
	}
	if out, err = p.Round2(map[int][]byte{peer: in}); err != nil {
		return err
	}
	if in, err = l.exchange(c, out[peer]); err != nil {
		return err
	}
	_, err = p.Finish(map[int][]byte{peer: in})
	return err
}

// exchange sends msg and receives the peer's message of the same round.
func (l *presignLink) exchange(c net.Conn, msg []byte) ([]byte, error) {
	werr := make(chan error, 1)
	go func() { werr <- writeFrame(c, 0, msg) }()
	_, in, err := readFrame(c)
	l.payload.Add(uint64(len(msg)))
	return in, errors.Join(err, <-werr)
}

// PresignNetRow is presign/net=<profile>: one presignature after another
// between parties 1 and 2 over TLS on the network's link between them
// (two rounds, each a message each way). It reports p50-ms and p99-ms,
// rtt-ms (the link's), cpu-ms/op (both parties, TLS and the shaper), and
// per party: payload-B/party, tls-B/party and wire-B/party.
func PresignNetRow(b *testing.B, n thresholdbench.Network) {
	shares := fixtureShares(b)
	l, err := newPresignLink(n)
	if err != nil {
		b.Fatal(err)
	}
	defer l.close()
	if err := l.presign(shares, []byte("warm-up")); err != nil { // and the TLS handshake
		b.Fatal(err)
	}
	s0, p0 := l.counter.Stats(), l.payload.Load()
	cpu0, ok := thresholdbench.CPUTime()
	var lat []time.Duration
	for b.Loop() {
		t0 := time.Now()
		if err := l.presign(shares, fmt.Appendf(nil, "net %d", len(lat))); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	cpuSince(b, cpu0, ok, b.N, "cpu-ms/op", 1e6)
	s1, p1 := l.counter.Stats(), l.payload.Load()
	slices.Sort(lat)
	b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
	b.ReportMetric(ms(lat[min(len(lat)-1, len(lat)*99/100)]), "p99-ms")
	b.ReportMetric(ms(n.Profile.RTT(n.Parties[0], n.Parties[1])), "rtt-ms")
	parties := float64(2 * b.N)
	b.ReportMetric(float64(p1-p0)/parties, "payload-B/party")
	b.ReportMetric(float64(s1.Out.Bytes+s1.In.Bytes-s0.Out.Bytes-s0.In.Bytes)/parties, "tls-B/party")
	b.ReportMetric(float64(s1.Out.WireBytes(52)+s1.In.WireBytes(52)-s0.Out.WireBytes(52)-s0.In.WireBytes(52))/parties, "wire-B/party")
}
