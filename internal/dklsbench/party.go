package dklsbench

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"sync/atomic"

	"github.com/signerkit/signerkit/netshape"
	"github.com/signerkit/signerkit/threshold/dkls23"
)

// server is one party: it answers a sign request (a presignature's id and
// a hash) with its share, using the presignature once.
type server struct {
	share *dkls23.Share
	ln    net.Listener
	mu    sync.Mutex
	pool  map[uint64]*dkls23.Presignature
	conns map[net.Conn]bool
	wg    sync.WaitGroup
}

func startServer(share *dkls23.Share, cert tls.Certificate) (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &server{share: share, pool: map[uint64]*dkls23.Presignature{}, conns: map[net.Conn]bool{},
		ln: tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13})}
	s.wg.Go(s.accept)
	return s, nil
}

func (s *server) put(id uint64, p *dkls23.Presignature) {
	s.mu.Lock()
	s.pool[id] = p
	s.mu.Unlock()
}

func (s *server) take(id uint64) *dkls23.Presignature {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pool[id]
	delete(s.pool, id)
	return p
}

func (s *server) accept() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns[c] = true
		s.mu.Unlock()
		s.wg.Go(func() { s.serve(c) })
	}
}

// serve answers requests in order; a request it cannot serve gets an
// empty body.
func (s *server) serve(c net.Conn) {
	defer c.Close()
	for {
		id, body, err := readFrame(c)
		if err != nil {
			return
		}
		var out []byte
		if len(body) == 40 {
			if p := s.take(binary.BigEndian.Uint64(body)); p != nil {
				if share, err := p.Sign(body[8:]); err == nil {
					out, _ = share.MarshalBinary()
				}
			}
		}
		if writeFrame(c, id, out) != nil {
			return
		}
	}
}

func (s *server) close() {
	s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// client is the coordinator's connection to one party, with requests
// multiplexed by id.
type client struct {
	conn    net.Conn
	wmu     sync.Mutex
	mu      sync.Mutex
	waiting map[uint64]chan []byte
	next    atomic.Uint64
	payload *atomic.Uint64
	done    chan struct{}
	err     error
}

// dial connects through netshape on link and completes the TLS handshake.
func dial(addr string, link netshape.Link, pool *x509.CertPool, payload *atomic.Uint64) (*client, error) {
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	shaped, err := netshape.Wrap(raw, link)
	if err != nil {
		raw.Close()
		return nil, err
	}
	conn := tls.Client(shaped, &tls.Config{RootCAs: pool, ServerName: "party", MinVersion: tls.VersionTLS13})
	if err := conn.Handshake(); err != nil {
		conn.Close()
		return nil, err
	}
	c := &client{conn: conn, waiting: map[uint64]chan []byte{}, payload: payload, done: make(chan struct{})}
	go c.read()
	return c, nil
}

func (c *client) read() {
	defer close(c.done)
	for {
		id, body, err := readFrame(c.conn)
		if err != nil {
			c.mu.Lock()
			c.err = err
			c.mu.Unlock()
			return
		}
		c.payload.Add(uint64(len(body)))
		c.mu.Lock()
		ch := c.waiting[id]
		delete(c.waiting, id)
		c.mu.Unlock()
		if ch != nil {
			ch <- body
		}
	}
}

// errRefused is a party's empty answer.
var errRefused = errors.New("dklsbench: the party did not sign")

// call sends req and waits for its answer.
func (c *client) call(ctx context.Context, req []byte) ([]byte, error) {
	id := c.next.Add(1)
	ch := make(chan []byte, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return nil, c.err
	}
	c.waiting[id] = ch
	c.mu.Unlock()
	c.wmu.Lock()
	err := writeFrame(c.conn, id, req)
	c.wmu.Unlock()
	if err != nil {
		return nil, err
	}
	c.payload.Add(uint64(len(req)))
	select {
	case b := <-ch:
		if len(b) == 0 {
			return nil, errRefused
		}
		return b, nil
	case <-c.done:
		return nil, errors.New("dklsbench: connection closed")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *client) close() {
	c.conn.Close()
	<-c.done
}
