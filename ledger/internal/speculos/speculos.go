// Package speculos is the client side of Speculos's raw APDU protocol
// (LedgerHQ/speculos; docs/protocols.md A.10), shared by package ledger's
// SpeculosDialer and ledgersim's: each command goes as u32be(len) || apdu,
// each reply comes back as u32be(len(data)) || data || SW1 SW2.
//
// An Extension adds frames of its own, whose length has the top bit set
// (ExtensionFlag), a length no Speculos client or server ever sends. Package
// ledger uses none; ledgersim's client adds the simulator's
// (ledger/internal/specext).
package speculos

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
	"github.com/signerkit/signerkit/signer/signertrace"
)

// MaxReply bounds the length a reply may announce: an APDU response
// carries at most 258 data bytes (docs/protocols.md A.2).
const MaxReply = 258

// ExtensionFlag marks the length of an extension frame.
const ExtensionFlag = 1 << 31

// Extension adds frames to the protocol, for a server that understands
// them.
type Extension interface {
	// Request appends to b what goes before the frame of the APDU that
	// ctx's exchange sends.
	Request(ctx context.Context, b []byte) []byte
	// Reply reads from r the n bytes of an extension frame that came
	// before a reply (n without ExtensionFlag). err is a frame it could
	// not read or refuses, which ends the exchange as any read error
	// does; stop, when not nil, is the exchange's answer instead of a
	// reply, which then does not follow.
	Reply(ctx context.Context, r io.Reader, n uint32) (stop, err error)
}

// Conn is one TCP connection to a Speculos APDU server. An exchange that
// fails or is cut short by its context leaves the connection out of step,
// so its owner drops it and dials again. It is safe for concurrent use;
// one exchange runs at a time.
type Conn struct {
	conn   net.Conn
	ext    Extension
	mu     sync.Mutex
	buf    []byte
	closed chan struct{}
	once   sync.Once
}

// Dial connects to the server at addr. ext may be nil.
func Dial(ctx context.Context, addr string, ext Extension) (*Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("ledger: speculos %s: %w", addr, ctx.Err())
		}
		return nil, fmt.Errorf("ledger: speculos %s: %w: %v", addr, signer.ErrDeviceNotFound, err)
	}
	return New(conn, ext), nil
}

// New returns a Conn over conn. ext may be nil.
func New(conn net.Conn, ext Extension) *Conn {
	return &Conn{conn: conn, ext: ext, closed: make(chan struct{})}
}

// Exchange sends apdu and returns the response (data and status word),
// reporting the bytes of Speculos's own frames to ctx's trace.
func (c *Conn) Exchange(ctx context.Context, apdu []byte) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.closed:
		return nil, fmt.Errorf("ledger: speculos: %w", signer.ErrClosed)
	default:
	}
	dl, _ := ctx.Deadline()
	c.conn.SetDeadline(dl)
	// When ctx ends, a deadline in the past cuts the exchange short. If
	// it ended as the exchange finished, wait for that deadline to be set
	// before returning: set later, it would cut the next exchange short.
	cut := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		c.conn.SetDeadline(time.Unix(1, 0))
		close(cut)
	})
	defer func() {
		if !stop() {
			<-cut
		}
	}()
	c.buf = c.buf[:0]
	if c.ext != nil {
		c.buf = c.ext.Request(ctx, c.buf)
	}
	c.buf = binary.BigEndian.AppendUint32(c.buf, uint32(len(apdu)))
	c.buf = append(c.buf, apdu...)
	trace := signertrace.ContextTrace(ctx)
	if _, err := c.conn.Write(c.buf); err != nil {
		return nil, c.fail(ctx, "write", err)
	}
	// Speculos's bytes only: extension frames are a side channel, not
	// the device's wire.
	trace.Add(signertrace.CountBytesOut, int64(4+len(apdu)))
	resp, answer, err := ReadReply(ctx, c.conn, c.ext)
	if err != nil {
		return nil, c.fail(ctx, "read", err)
	}
	if answer != nil {
		return nil, answer
	}
	trace.Add(signertrace.CountBytesIn, int64(4+len(resp)))
	return resp, nil
}

// ReadReply reads one u32be(len) || data || SW reply from r. With ext, an
// extension frame may come first, which ext reads; when ext answers the
// exchange itself (stop), ReadReply returns that as answer, and no reply.
func ReadReply(ctx context.Context, r io.Reader, ext Extension) (resp []byte, answer, err error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if ext != nil && n&ExtensionFlag != 0 {
		stop, err := ext.Reply(ctx, r, n&^ExtensionFlag)
		if err != nil || stop != nil {
			return nil, stop, unexpected(err)
		}
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return nil, nil, unexpected(err)
		}
		n = binary.BigEndian.Uint32(hdr[:])
	}
	if n > MaxReply {
		return nil, nil, fmt.Errorf("ledger: speculos reply announces %d data bytes, more than %d: %w", n, MaxReply, signer.ErrProtocol)
	}
	resp = make([]byte, n+2)
	if _, err := io.ReadFull(r, resp); err != nil {
		return nil, nil, unexpected(err)
	}
	return resp, nil, nil
}

// unexpected turns io.EOF, in the middle of a reply, into
// io.ErrUnexpectedEOF.
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func (c *Conn) fail(ctx context.Context, op string, err error) error {
	select {
	case <-c.closed:
		return fmt.Errorf("ledger: speculos %s: %w", op, signer.ErrClosed)
	default:
	}
	if ctx.Err() != nil {
		cause := context.Cause(ctx)
		if cause == nil {
			cause = ctx.Err()
		}
		return fmt.Errorf("ledger: speculos %s: no reply: %w", op, cause)
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
func (c *Conn) Close() error {
	var err error
	c.once.Do(func() {
		close(c.closed)
		err = c.conn.Close()
	})
	return err
}
