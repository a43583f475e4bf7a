package ledgersim

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"sync"
)

// maxSpeculosCommand bounds a command the server reads: a 5-byte header
// and 255 data bytes.
const maxSpeculosCommand = 260

// SpeculosServer is the device's Speculos face: a TCP server (on loopback,
// unless given a listener of its own by ServeSpeculosOn)
// that speaks Speculos's raw APDU protocol (LedgerHQ/speculos
// speculos/mcu/apdu.py, docs/protocols.md A.10), so ledger.SpeculosDialer and
// any Ledger tool that talks to Speculos run against the simulator. Like
// Speculos it serves one client at a time: a new connection replaces the
// old one. A TCP byte stream has no side channel for the caller's trace,
// so this face reports no modeled stages; in realtime mode it sleeps them
// before replying.
type SpeculosServer struct {
	d   *Device
	ln  net.Listener
	wg  sync.WaitGroup
	ctx context.Context
	end context.CancelFunc

	mu   sync.Mutex
	conn net.Conn
}

// ServeSpeculos starts the Speculos face on 127.0.0.1 on a free port.
func (d *Device) ServeSpeculos() (*SpeculosServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	return d.ServeSpeculosOn(ln), nil
}

// ServeSpeculosOn starts the Speculos face on ln, which the server owns
// from then on and closes on Close.
func (d *Device) ServeSpeculosOn(ln net.Listener) *SpeculosServer {
	ctx, end := context.WithCancel(context.Background())
	s := &SpeculosServer{d: d, ln: ln, ctx: ctx, end: end}
	s.wg.Add(1)
	go s.accept()
	return s
}

// Addr returns the host:port the server listens on.
func (s *SpeculosServer) Addr() string { return s.ln.Addr().String() }

func (s *SpeculosServer) accept() {
	defer s.wg.Done()
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.conn != nil {
			s.conn.Close()
		}
		s.conn = conn
		s.mu.Unlock()
		s.wg.Add(1)
		go s.serve(conn)
	}
}

func (s *SpeculosServer) serve(conn net.Conn) {
	defer s.wg.Done()
	defer conn.Close()
	d := s.d
	d.mu.Lock()
	gone := d.gone
	plugged := d.plugged
	d.mu.Unlock()
	if !plugged {
		return
	}
	stop := context.AfterFunc(s.ctx, func() { conn.Close() })
	defer stop()
	served := make(chan struct{})
	defer close(served)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		select {
		case <-gone:
			conn.Close()
		case <-served:
		}
	}()
	var hdr [4]byte
	for {
		if _, err := io.ReadFull(conn, hdr[:]); err != nil {
			return
		}
		n := binary.BigEndian.Uint32(hdr[:])
		if n > maxSpeculosCommand {
			return
		}
		apdu := make([]byte, n)
		if _, err := io.ReadFull(conn, apdu); err != nil {
			return
		}
		d.mu.Lock()
		resp, c, f, ok := d.receiveLocked(apdu)
		d.mu.Unlock()
		switch {
		case f == FaultUnplug:
			return
		case !ok:
			continue // lost
		}
		// No caller trace reaches this face: spend with none attached,
		// which in realtime mode sleeps and otherwise does nothing.
		if err := d.spend(s.ctx, nil, len(apdu), len(resp), c); err != nil {
			return
		}
		out := binary.BigEndian.AppendUint32(nil, uint32(len(resp)-2))
		if _, err := conn.Write(append(out, resp...)); err != nil {
			return
		}
	}
}

// Close stops the server and waits for its goroutines.
func (s *SpeculosServer) Close() error {
	s.end()
	err := s.ln.Close()
	s.mu.Lock()
	if s.conn != nil {
		s.conn.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}
