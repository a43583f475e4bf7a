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

	"github.com/signerkit/signerkit/signer"
)

// maxSpeculosReply bounds the length a Speculos reply may announce: an APDU
// response carries at most 258 data bytes (docs/protocols.md A.2).
const maxSpeculosReply = 258

// SpeculosDialer returns a Dialer for Speculos's raw APDU server
// (LedgerHQ/speculos, default 127.0.0.1:9999; docs/protocols.md A.10): each
// command goes as u32be(len) || apdu, each reply comes back as
// u32be(len(data)) || data || SW1 SW2.
func SpeculosDialer(addr string) Dialer {
	return func(ctx context.Context) (Transport, error) {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("ledger: speculos %s: %w", addr, ctx.Err())
			}
			return nil, fmt.Errorf("ledger: speculos %s: %w: %v", addr, signer.ErrDeviceNotFound, err)
		}
		return &SpeculosTransport{conn: conn, closed: make(chan struct{})}, nil
	}
}

// SpeculosTransport is a Transport over one TCP connection to Speculos.
// An exchange that fails or is cut short by its context leaves the
// connection out of step, so the Signer drops it and dials again. It is
// safe for concurrent use; one exchange runs at a time.
type SpeculosTransport struct {
	conn   net.Conn
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
	t.buf = binary.BigEndian.AppendUint32(t.buf[:0], uint32(len(apdu)))
	t.buf = append(t.buf, apdu...)
	trace := signer.ContextTrace(ctx)
	if _, err := t.conn.Write(t.buf); err != nil {
		return nil, t.fail(ctx, "write", err)
	}
	trace.Add(signer.CountBytesOut, int64(len(t.buf)))
	resp, err := readSpeculosReply(t.conn)
	if err != nil {
		return nil, t.fail(ctx, "read", err)
	}
	trace.Add(signer.CountBytesIn, int64(4+len(resp)))
	return resp, nil
}

// readSpeculosReply reads one u32be(len) || data || SW reply.
func readSpeculosReply(r io.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > maxSpeculosReply {
		return nil, fmt.Errorf("ledger: speculos reply announces %d data bytes, more than %d: %w", n, maxSpeculosReply, signer.ErrProtocol)
	}
	resp := make([]byte, n+2)
	if _, err := io.ReadFull(r, resp); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
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
