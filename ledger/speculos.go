package ledger

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/signerkit/signerkit/internal/simtime"
	"github.com/signerkit/signerkit/ledger/internal/specext"
	"github.com/signerkit/signerkit/signer"
)

// maxSpeculosReply bounds the length a Speculos reply may announce: an APDU
// response carries at most 258 data bytes (docs/protocols.md A.2).
const maxSpeculosReply = 258

// SpeculosDialer returns a Dialer for Speculos's raw APDU server
// (LedgerHQ/speculos, default 127.0.0.1:9999; docs/protocols.md A.10): each
// command goes as u32be(len) || apdu, each reply comes back as
// u32be(len(data)) || data || SW1 SW2.
func SpeculosDialer(addr string) Dialer { return speculosDialer(addr, false) }

// SpeculosSimulatorDialer returns a Dialer for the Speculos face of the
// simulator in ledger/ledgersim (Device.ServeSpeculos, cmd/ledgersim), in
// a URI ledger:speculos=<host:port>?simulator=true. It speaks Speculos's
// protocol plus signerkit's own frames, which only the simulator
// understands: before each APDU it tells the simulator how much time the
// caller's deadline leaves (less the modeled time already accounted
// under it), and the simulator answers with the exchange's modeled
// stages, which the transport reports to the caller's signer.Trace (wire,
// confirm and device, as the in-process faces report them). In accounted
// mode, an exchange whose modeled time would run past the deadline gets
// no reply but the modeled time before the deadline, and fails at once
// with a *DeadlineError (context.DeadlineExceeded), as the in-process
// faces fail; the device has executed the APDU. In realtime mode the
// simulator sleeps and the connection's deadline, which is the
// context's, ends the wait.
//
// Never point it at a real Speculos, which would read the extension
// frames as garbage; and only at a simulator you trust: whatever answers
// at addr could put forged times in the caller's traces and metrics.
func SpeculosSimulatorDialer(addr string) Dialer { return speculosDialer(addr, true) }

func speculosDialer(addr string, sim bool) Dialer {
	return func(ctx context.Context) (Transport, error) {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("ledger: speculos %s: %w", addr, ctx.Err())
			}
			return nil, fmt.Errorf("ledger: speculos %s: %w: %v", addr, signer.ErrDeviceNotFound, err)
		}
		return &SpeculosTransport{conn: conn, closed: make(chan struct{}), sim: sim}, nil
	}
}

// SpeculosTransport is a Transport over one TCP connection to Speculos.
// An exchange that fails or is cut short by its context leaves the
// connection out of step, so the Signer drops it and dials again. It is
// safe for concurrent use; one exchange runs at a time.
type SpeculosTransport struct {
	conn   net.Conn
	sim    bool // speaks signerkit's extension (SpeculosSimulatorDialer)
	mu     sync.Mutex
	buf    []byte
	closed chan struct{}
	once   sync.Once
}

var _ Transport = (*SpeculosTransport)(nil)

// Exchange sends apdu and returns the response (data and status word).
func (t *SpeculosTransport) Exchange(ctx context.Context, apdu []byte) ([]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	select {
	case <-t.closed:
		return nil, fmt.Errorf("ledger: speculos: %w", signer.ErrClosed)
	default:
	}
	dl, _ := ctx.Deadline()
	t.conn.SetDeadline(dl)
	// When ctx ends, a deadline in the past cuts the exchange short. If
	// it ended as the exchange finished, wait for that deadline to be set
	// before returning: set later, it would cut the next exchange short.
	cut := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		t.conn.SetDeadline(time.Unix(1, 0))
		close(cut)
	})
	defer func() {
		if !stop() {
			<-cut
		}
	}()
	t.buf = t.buf[:0]
	if t.sim {
		left := time.Until(dl) - simtime.AccountedUnder(ctx)
		t.buf = specext.AppendTimeLeft(t.buf, left, !dl.IsZero())
	}
	t.buf = binary.BigEndian.AppendUint32(t.buf, uint32(len(apdu)))
	t.buf = append(t.buf, apdu...)
	trace := signer.ContextTrace(ctx)
	if _, err := t.conn.Write(t.buf); err != nil {
		return nil, t.fail(ctx, "write", err)
	}
	// Speculos's bytes only: the extension frames are the simulator's
	// side channel, not the device's wire.
	trace.Add(signer.CountBytesOut, int64(4+len(apdu)))
	resp, ext, err := readSpeculosReply(t.conn, t.sim)
	if err != nil {
		return nil, t.fail(ctx, "read", err)
	}
	if ext != nil {
		for _, s := range ext.Stages {
			if !s.Slept {
				simtime.Account(ctx, s.Duration)
			}
			trace.Report(s)
		}
		if ext.Exceeded {
			var accounted time.Duration
			for _, s := range ext.Stages {
				accounted += s.Duration
			}
			return nil, &DeadlineError{Modeled: ext.Modeled, Accounted: accounted}
		}
	}
	trace.Add(signer.CountBytesIn, int64(4+len(resp)))
	return resp, nil
}

// DeadlineError is the error of an exchange with ledgersim's Speculos face
// (SpeculosSimulatorDialer) that the simulator did not answer because, in
// its accounted time mode, the exchange's modeled time would have run
// past the caller's deadline: a real device would still have been busy
// when the caller gave up. The device did execute the APDU. The caller's
// trace has the modeled time up to the deadline. It unwraps to
// context.DeadlineExceeded.
type DeadlineError struct {
	// Modeled is the exchange's modeled time (USB, confirmation and
	// device), and Accounted the part of it before the deadline.
	Modeled, Accounted time.Duration
}

// Error describes the timeout in modeled time.
func (e *DeadlineError) Error() string {
	return fmt.Sprintf("ledger: speculos: the simulated device needed %v of modeled time, %v of it before the deadline: %v", e.Modeled, e.Accounted, context.DeadlineExceeded)
}

// Unwrap returns context.DeadlineExceeded.
func (e *DeadlineError) Unwrap() error { return context.DeadlineExceeded }

// readSpeculosReply reads one u32be(len) || data || SW reply. With sim,
// a reply extension frame (ledger/internal/specext) may come first, and
// with KindDeadline comes alone.
func readSpeculosReply(r io.Reader, sim bool) ([]byte, *specext.Reply, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	var ext *specext.Reply
	if sim && n&specext.Flag != 0 {
		n &^= specext.Flag
		if n > specext.MaxPayload {
			return nil, nil, fmt.Errorf("ledger: speculos simulator: a %d-byte extension frame, more than %d: %w", n, specext.MaxPayload, signer.ErrProtocol)
		}
		p := make([]byte, n)
		if _, err := io.ReadFull(r, p); err != nil {
			return nil, nil, unexpected(err)
		}
		e, err := specext.ParseReply(p)
		if err != nil {
			return nil, nil, fmt.Errorf("ledger: speculos simulator: %w: %v", signer.ErrProtocol, err)
		}
		if e.Exceeded {
			return nil, &e, nil
		}
		ext = &e
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return nil, nil, unexpected(err)
		}
		n = binary.BigEndian.Uint32(hdr[:])
	}
	resp, err := readSpeculosData(r, n)
	return resp, ext, err
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// readSpeculosData reads the data and status word of a reply whose
// header announced n data bytes.
func readSpeculosData(r io.Reader, n uint32) ([]byte, error) {
	if n > maxSpeculosReply {
		return nil, fmt.Errorf("ledger: speculos reply announces %d data bytes, more than %d: %w", n, maxSpeculosReply, signer.ErrProtocol)
	}
	resp := make([]byte, n+2)
	if _, err := io.ReadFull(r, resp); err != nil {
		return nil, unexpected(err)
	}
	return resp, nil
}

func (t *SpeculosTransport) fail(ctx context.Context, op string, err error) error {
	select {
	case <-t.closed:
		return fmt.Errorf("ledger: speculos %s: %w", op, signer.ErrClosed)
	default:
	}
	if ctx.Err() != nil {
		return ctxError(ctx, "speculos "+op, 0, nil)
	}
	if _, ok := ctx.Deadline(); ok && errors.Is(err, os.ErrDeadlineExceeded) {
		// The connection's deadline is ctx's, and may pass a moment
		// before ctx notices.
		return fmt.Errorf("ledger: speculos %s: no reply: %w", op, context.DeadlineExceeded)
	}
	if errors.Is(err, signer.ErrProtocol) {
		return err
	}
	return fmt.Errorf("ledger: speculos %s: %w: %v", op, signer.ErrDisconnected, err)
}

// Close closes the connection; an exchange in flight returns ErrClosed.
func (t *SpeculosTransport) Close() error {
	var err error
	t.once.Do(func() {
		close(t.closed)
		err = t.conn.Close()
	})
	return err
}
