package threshold

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/threshold/frost"
)

// clientConn is one TLS connection from the coordinator to a party,
// carrying any number of requests at once, matched to responses by id.
type clientConn struct {
	conn *tls.Conn
	w    *frameWriter
	c    *counters

	mu      sync.Mutex
	pending map[uint32]chan frame
	nextID  uint32
	err     error
	done    chan struct{}
}

func dialParty(ctx context.Context, dial func(context.Context, string, string) (net.Conn, error), addr string, conf *tls.Config, c *counters) (*clientConn, error) {
	raw, err := dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	conn := tls.Client(&countingConn{Conn: raw, c: c}, conf)
	if err := conn.HandshakeContext(ctx); err != nil {
		raw.Close()
		return nil, err
	}
	if v := conn.ConnectionState().Version; v != tls.VersionTLS13 {
		conn.Close()
		return nil, fmt.Errorf("threshold: party %s negotiated TLS version %#x, not 1.3: %w", addr, v, signer.ErrProtocol)
	}
	cc := &clientConn{conn: conn, w: newFrameWriter(conn), c: c, pending: map[uint32]chan frame{}, done: make(chan struct{})}
	go cc.readLoop()
	return cc, nil
}

func (cc *clientConn) readLoop() {
	r := bufio.NewReaderSize(cc.conn, 16<<10)
	var err error
	for {
		var f frame
		f, err = readFrame(r)
		if err != nil {
			break
		}
		cc.c.frames.Add(1)
		cc.c.payloadIn.Add(uint64(len(f.body)))
		cc.mu.Lock()
		ch := cc.pending[f.id]
		delete(cc.pending, f.id)
		cc.mu.Unlock()
		if ch != nil {
			ch <- f // buffered: never blocks
		}
	}
	cc.fail(err)
}

func (cc *clientConn) fail(err error) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.err != nil {
		return
	}
	if err == nil {
		err = net.ErrClosed
	}
	cc.err = fmt.Errorf("threshold: connection to party lost: %w: %w", signer.ErrDisconnected, err)
	cc.pending = nil
	close(cc.done)
	cc.conn.Close()
}

func (cc *clientConn) broken() bool {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.err != nil
}

// roundTrip sends a request and waits for its response or ctx.
func (cc *clientConn) roundTrip(ctx context.Context, typ byte, body []byte) (frame, error) {
	ch := make(chan frame, 1)
	cc.mu.Lock()
	if cc.err != nil {
		err := cc.err
		cc.mu.Unlock()
		return frame{}, err
	}
	cc.nextID++
	id := cc.nextID
	cc.pending[id] = ch
	cc.mu.Unlock()
	if err := cc.w.write(frame{typ: typ, id: id, body: body}); err != nil {
		cc.fail(err)
		return frame{}, fmt.Errorf("threshold: writing to party: %w: %w", signer.ErrDisconnected, err)
	}
	cc.c.frames.Add(1)
	cc.c.payloadOut.Add(uint64(len(body)))
	select {
	case f := <-ch:
		return f, nil
	case <-cc.done:
		cc.mu.Lock()
		err := cc.err
		cc.mu.Unlock()
		return frame{}, err
	case <-ctx.Done():
		cc.mu.Lock()
		if cc.pending != nil {
			delete(cc.pending, id)
		}
		cc.mu.Unlock()
		return frame{}, ctx.Err()
	}
}

func (cc *clientConn) close() { cc.fail(net.ErrClosed) }

// PartyError is an error a party returned for a request. It unwraps to a
// sentinel that says what kind: frost.ErrNonceUsed, signer.ErrDoubleSign,
// signer.ErrMessageTooLarge, signer.ErrProtocol or signer.ErrBusy.
type PartyError struct {
	ID   frost.Identifier
	Code byte
	Text string
}

// Error names the party and quotes its reason.
func (e *PartyError) Error() string {
	return fmt.Sprintf("threshold: party %d refused: %s", e.ID, e.Text)
}

// Unwrap returns the sentinel for Code.
func (e *PartyError) Unwrap() error {
	switch e.Code {
	case codeNonceUsed:
		return frost.ErrNonceUsed
	case codeDoubleSign:
		return signer.ErrDoubleSign
	case codeTooLarge:
		return signer.ErrMessageTooLarge
	case codeUnavailable:
		return signer.ErrBusy
	}
	return signer.ErrProtocol
}

// final reports whether an error ends a sign rather than being routed
// around: a double sign or a message too long would fail on every party.
func final(err error) bool {
	return errors.Is(err, signer.ErrDoubleSign) || errors.Is(err, signer.ErrMessageTooLarge)
}

func responseError(id frost.Identifier, f frame, want byte) error {
	if f.typ == typeError {
		if len(f.body) < 1 {
			return &ProtocolError{fmt.Sprintf("party %d: empty error frame", id)}
		}
		return &PartyError{ID: id, Code: f.body[0], Text: string(f.body[1:])}
	}
	if f.typ != want {
		return &ProtocolError{fmt.Sprintf("party %d answered with frame type %d, want %d", id, f.typ, want)}
	}
	return nil
}

func parseShare(id frost.Identifier, body []byte) (frost.SignatureShare, error) {
	if len(body) != frost.ScalarSize {
		return frost.SignatureShare{}, &ProtocolError{fmt.Sprintf("party %d sent a %d-byte share", id, len(body))}
	}
	b := binary.BigEndian.AppendUint16(make([]byte, 0, frost.SignatureShareSize), uint16(id))
	return frost.ParseSignatureShare(append(b, body...))
}
