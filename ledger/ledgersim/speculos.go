package ledgersim

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/signerkit/signerkit/internal/simtime"
	"github.com/signerkit/signerkit/ledger/internal/specext"
	"github.com/signerkit/signerkit/signer/signertrace"
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
// old one. A TCP byte stream has no side channel for the caller's trace
// or deadline, so to a standard client this face reports no modeled
// stages and, in realtime mode, sleeps them before replying. A client
// that sends signerkit's extension frames (SpeculosDialer;
// the format is in ledger/internal/specext, a length with its top bit set
// that no Speculos client sends) gets each exchange's modeled stages
// back, and in accounted mode its deadline honoured in modeled time (see
// the package doc).
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
		var ext *timeLeft // nil for a standard Speculos client's APDU
		if n&specext.Flag != 0 {
			// signerkit's extension (ledger/internal/specext): the time
			// the caller's deadline leaves, then the APDU.
			if n != specext.Flag|specext.TimeLeftSize {
				return
			}
			p := make([]byte, specext.TimeLeftSize)
			if _, err := io.ReadFull(conn, p); err != nil {
				return
			}
			left, has, err := specext.ParseTimeLeft(p)
			if err != nil {
				return
			}
			ext = &timeLeft{left: left, has: has}
			if _, err := io.ReadFull(conn, hdr[:]); err != nil {
				return
			}
			if n = binary.BigEndian.Uint32(hdr[:]); n&specext.Flag != 0 {
				return
			}
		}
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
		reply := binary.BigEndian.AppendUint32(nil, uint32(len(resp)-2))
		reply = append(reply, resp...)
		if ext == nil {
			// No caller trace or deadline reaches this face: spend with
			// none attached, which in realtime mode sleeps and otherwise
			// does nothing.
			if err := d.spend(s.ctx, nil, len(apdu), len(resp), c); err != nil {
				return
			}
		} else {
			out, exceeded, err := s.spendFor(ext, len(apdu), len(resp), c)
			if err != nil {
				return
			}
			if !exceeded {
				out = append(out, reply...)
			}
			reply = out
		}
		if _, err := conn.Write(reply); err != nil {
			return
		}
	}
}

// timeLeft is what a client's time-left frame said.
type timeLeft struct {
	left time.Duration
	has  bool
}

// spendFor spends an exchange's modeled time for a client that sent a
// time-left frame, and returns the reply extension frame to send before
// the APDU reply or, when the caller's deadline fell within the modeled
// time (accounted mode), instead of it (exceeded). In accounted mode the
// deadline is the one the client sent; in realtime mode the device sleeps
// under the server's context and the client's socket deadline cuts the
// wait short, as with a real device.
func (s *SpeculosServer) spendFor(ext *timeLeft, req, resp int, c costs) (out []byte, exceeded bool, err error) {
	d := s.d
	var stages []signertrace.StageInfo
	ctx := signertrace.WithTrace(s.ctx, &signertrace.Trace{StageDone: func(i signertrace.StageInfo) { stages = append(stages, i) }})
	if ext.has && d.mode != simtime.Realtime {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, time.Now().Add(ext.left))
		defer cancel()
	}
	err = d.spend(ctx, nil, req, resp, c)
	switch {
	case err != nil && s.ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded):
		return specext.AppendReply(nil, true, d.modeled(req, resp, c), stages), true, nil
	case err != nil:
		return nil, false, err
	}
	return specext.AppendReply(nil, false, 0, stages), false, nil
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
