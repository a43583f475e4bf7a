package cardsim

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// vpcd's control codes: a one-byte frame from the reader driver.
const (
	vpcdPowerOff = 0x00
	vpcdPowerOn  = 0x01
	vpcdReset    = 0x02
	vpcdGetATR   = 0x04
)

// MaxFrame is the longest vpcd frame: a two-byte length.
const MaxFrame = 0xFFFF

// ErrFrame is what a malformed vpcd frame wraps.
var ErrFrame = errors.New("cardsim: malformed vpcd frame")

// FrameError is a vpcd frame that could not be read or is malformed. It
// unwraps to ErrFrame and to the read error, if any.
type FrameError struct {
	What string
	Err  error
}

func (e *FrameError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("cardsim: vpcd frame: %s: %v", e.What, e.Err)
	}
	return "cardsim: vpcd frame: " + e.What
}

// Unwrap returns ErrFrame and the read error.
func (e *FrameError) Unwrap() []error { return []error{ErrFrame, e.Err} }

// ReadFrame reads one vpcd frame: a two-byte big-endian length and that
// many bytes. An empty frame is malformed. A stream that ends between
// frames returns io.EOF itself.
func ReadFrame(r io.Reader) ([]byte, error) {
	var hdr [2]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		if err == io.EOF {
			return nil, io.EOF
		}
		return nil, &FrameError{What: "length", Err: err}
	}
	n := int(binary.BigEndian.Uint16(hdr[:]))
	if n == 0 {
		return nil, &FrameError{What: "zero length"}
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, &FrameError{What: fmt.Sprintf("%d-byte body", n), Err: err}
	}
	return b, nil
}

// AppendFrame appends b as one vpcd frame; b is at most MaxFrame bytes.
func AppendFrame(dst, b []byte) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(b)))
	return append(dst, b...)
}

// ServeVPCD runs the card on one vpcd connection, the virtual card's side
// of vsmartcard's protocol: the reader driver (vpcd, inside pcscd) sends
// frames of a two-byte length and a body; a one-byte body is a control
// code (power off, power on, reset: the card resets; get ATR: it answers
// with ATR), any other an APDU, answered with the response (after Hang
// is released, if the card hangs). Modeled time
// is slept in realtime mode (a PC/SC client has no trace to account it
// on). ServeVPCD returns when ctx ends or the connection closes, with nil
// for a clean end of stream; closing the connection is how the card is
// removed from the reader.
func (c *Card) ServeVPCD(ctx context.Context, conn io.ReadWriter) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		b, err := ReadFrame(conn)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		var resp []byte
		if len(b) == 1 {
			switch b[0] {
			case vpcdPowerOff, vpcdPowerOn, vpcdReset:
				c.Reset()
				continue
			case vpcdGetATR:
				resp = c.ATR()
			default:
				return &FrameError{What: fmt.Sprintf("unknown control code %#02x", b[0])}
			}
		} else {
			if err := c.waitHang(ctx); err != nil {
				return err
			}
			c.mu.Lock()
			var o op
			resp, o = c.transmitLocked(b)
			fault := c.takeFaultLocked()
			c.mu.Unlock()
			if fault == FaultRemove {
				return ErrPulled
			}
			if err := c.spend(ctx, o); err != nil {
				return err
			}
		}
		if _, err := conn.Write(AppendFrame(nil, resp)); err != nil {
			return err
		}
	}
}

// waitHang waits while the card is hung (Hang), or until ctx ends.
func (c *Card) waitHang(ctx context.Context) error {
	c.mu.Lock()
	hung := c.plug.hung
	c.mu.Unlock()
	if hung == nil {
		return nil
	}
	select {
	case <-hung:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ErrPulled is what ServeVPCD returns when FaultRemove pulled the card:
// the connection is to be closed without an answer.
var ErrPulled = errors.New("cardsim: card pulled mid-command (FaultRemove)")

// VPCDPort is vpcd's default port (0x8C7B), where its reader driver
// listens for a virtual card.
const VPCDPort = 35963

// DialVPCD connects the card to vpcd listening at addr (host:port),
// trying again every retry until ctx ends while nothing listens yet, and
// serves it with ServeVPCD until ctx ends or vpcd closes the connection.
// connected, if not nil, is called once the card is in the reader.
func (c *Card) DialVPCD(ctx context.Context, addr string, retry time.Duration, connected func()) error {
	var d net.Dialer
	for {
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			return c.serveConn(ctx, conn, connected)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cardsim: vpcd at %s: %w (last: %v)", addr, ctx.Err(), err)
		case <-time.After(retry):
		}
	}
}

func (c *Card) serveConn(ctx context.Context, conn net.Conn, connected func()) error {
	var once sync.Once
	stop := context.AfterFunc(ctx, func() { once.Do(func() { conn.Close() }) })
	defer stop()
	defer once.Do(func() { conn.Close() })
	if connected != nil {
		connected()
	}
	err := c.ServeVPCD(ctx, quickAck(conn))
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}
