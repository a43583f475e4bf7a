package speculos

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signer"
)

// raceConn forces the interleaving in which the deadline that a cancelled
// exchange sets from its context.AfterFunc lands after the next exchange
// has set its own: a SetDeadline to the past marker waits (up to 200 ms)
// for the next SetDeadline, which waits (up to 50 ms) for it and applies
// it just after its own.
type raceConn struct {
	net.Conn
	onRead func(n int) // called with the bytes read so far

	mu      sync.Mutex
	read    int
	pending chan chan struct{} // a past-marker call waiting for the next SetDeadline
}

func (c *raceConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	c.read += n
	read := c.read
	c.mu.Unlock()
	if c.onRead != nil {
		c.onRead(read)
	}
	return n, err
}

var pastMarker = time.Unix(1, 0)

func (c *raceConn) SetDeadline(t time.Time) error {
	if t.Equal(pastMarker) {
		applied := make(chan struct{})
		select {
		case c.pending <- applied:
			<-applied // the next SetDeadline applied ours after its own
		case <-time.After(200 * time.Millisecond):
			c.Conn.SetDeadline(t)
		}
		return nil
	}
	err := c.Conn.SetDeadline(t)
	select {
	case applied := <-c.pending:
		c.Conn.SetDeadline(pastMarker)
		close(applied)
	case <-time.After(50 * time.Millisecond):
	}
	return err
}

// An exchange whose context is cancelled as its reply arrives succeeds,
// and must not leave the connection's deadline in the past for the next
// exchange, which has a live context.
func TestSpeculosCancelledExchangeLeavesNoDeadline(t *testing.T) {
	t.Parallel()
	client, server := net.Pipe()
	defer client.Close()
	go func() { // a Speculos that answers every APDU with 90 00
		defer server.Close()
		var hdr [4]byte
		for {
			if _, err := io.ReadFull(server, hdr[:]); err != nil {
				return
			}
			if _, err := io.CopyN(io.Discard, server, int64(binary.BigEndian.Uint32(hdr[:]))); err != nil {
				return
			}
			if _, err := server.Write([]byte{0, 0, 0, 0, 0x90, 0x00}); err != nil {
				return
			}
		}
	}()
	ctx1, cancel1 := context.WithCancel(context.Background())
	defer cancel1()
	rc := &raceConn{Conn: client, pending: make(chan chan struct{})}
	rc.onRead = func(n int) {
		if n >= 6 { // the whole first reply is in: the caller gives up now
			cancel1()
		}
	}
	tr := New(rc, nil)
	defer tr.Close()
	apdu := []byte{0xe0, 0x00, 0, 0, 0} // GET_VERSION
	if _, err := tr.Exchange(ctx1, apdu); err != nil {
		t.Fatalf("first exchange: %v", err)
	}
	rc.onRead = nil
	ctx2, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel2()
	if resp, err := tr.Exchange(ctx2, apdu); err != nil {
		t.Fatalf("the exchange after a cancelled one failed: %x, %v", resp, err)
	}
}

// FuzzReadReply reads arbitrary bytes as a Speculos reply, as a standard
// client does (ledgersim's FuzzSpeculosReply reads them as its client
// does, with the simulator's extension frames).
func FuzzReadReply(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0x90, 0x00})
	f.Add(append([]byte{0, 0, 0, 64}, make([]byte, 66)...))
	f.Add([]byte{0, 0, 0, 1, 7, 0x69, 0x84})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0, 0, 0, 5, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		resp, answer, err := ReadReply(context.Background(), bytes.NewReader(b), nil)
		if answer != nil {
			t.Fatalf("a standard client read an answer from %x", b)
		}
		if err != nil {
			if len(b) >= 4 && binary.BigEndian.Uint32(b) > MaxReply && !errors.Is(err, signer.ErrProtocol) {
				t.Fatalf("oversized reply: %v, want ErrProtocol", err)
			}
			return
		}
		n := int(binary.BigEndian.Uint32(b))
		if len(resp) != n+2 || !bytes.Equal(resp, b[4:4+n+2]) {
			t.Fatalf("reply %x from %x", resp, b)
		}
	})
}
