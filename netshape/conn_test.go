package netshape

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestReadDeadline: a byte on its way but not yet due does not satisfy a
// Read; the Read times out with os.ErrDeadlineExceeded, and the byte comes
// later.
func TestReadDeadline(t *testing.T) {
	t.Parallel()
	const delay = 100 * time.Millisecond
	c, s := shapedPair(t, Link{In: Path{Delay: delay}})
	sent := time.Now()
	if _, err := s.Write([]byte{42}); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
	b := make([]byte, 1)
	n, err := c.Read(b)
	if n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read = %d, %v; want 0 and os.ErrDeadlineExceeded", n, err)
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("Read error %v is not a net.Error with Timeout()", err)
	}
	c.SetReadDeadline(time.Time{})
	if _, err := io.ReadFull(c, b); err != nil || b[0] != 42 {
		t.Fatalf("Read after clearing the deadline = %v, %v", b, err)
	}
	if took := time.Since(sent); took < delay {
		t.Errorf("byte arrived after %v, before its delay %v", took, delay)
	}
}

// TestWriteDeadline: a Write blocked on a full queue times out at its
// deadline, having queued what fitted.
func TestWriteDeadline(t *testing.T) {
	// Bytes due in an hour never leave the 4 KiB queue.
	c, _ := shapedPair(t, Link{Out: Path{Delay: time.Hour}, Buffer: 4096})
	c.SetWriteDeadline(time.Now().Add(20 * time.Millisecond))
	n, err := c.Write(make([]byte, 10000))
	if n != 4096 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Write = %d, %v; want 4096 and os.ErrDeadlineExceeded", n, err)
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("Write error %v is not a net.Error with Timeout()", err)
	}
	// A deadline in the past fails at once, writing nothing.
	c.SetWriteDeadline(time.Unix(1, 0))
	if n, err := c.Write([]byte{1}); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Write past deadline = %d, %v", n, err)
	}
}

// TestCloseUnblocks: Close returns a blocked Read and a blocked Write with
// net.ErrClosed, and later calls fail the same way.
func TestCloseUnblocks(t *testing.T) {
	c, _ := shapedPair(t, Link{Out: Path{Delay: time.Hour}, Buffer: 1})
	errs := make(chan error, 2)
	go func() {
		_, err := c.Read(make([]byte, 1))
		errs <- err
	}()
	go func() {
		_, err := c.Write(make([]byte, 2))
		errs <- err
	}()
	time.Sleep(20 * time.Millisecond) // let both block; the test holds without it
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for range 2 {
		if err := <-errs; !errors.Is(err, net.ErrClosed) {
			t.Errorf("blocked call returned %v, want net.ErrClosed", err)
		}
	}
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Read after Close: %v", err)
	}
	if _, err := c.Write([]byte{1}); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Write after Close: %v", err)
	}
	if err := c.SetDeadline(time.Now()); !errors.Is(err, net.ErrClosed) {
		t.Errorf("SetDeadline after Close: %v", err)
	}
	if err := c.Close(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("second Close: %v", err)
	}
}

// TestCloseDeliversWritten: bytes written just before Close still reach the
// peer, no sooner than their delay, followed by EOF.
func TestCloseDeliversWritten(t *testing.T) {
	const delay = 30 * time.Millisecond
	c, s := shapedPair(t, Link{Out: Path{Delay: delay}})
	data := bytes.Repeat([]byte("shaped "), 2000)
	start := time.Now()
	if _, err := c.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(s)
	if err != nil {
		t.Fatalf("peer read: %v", err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("peer got %d bytes, want %d", len(got), len(data))
	}
	if took := time.Since(start); took < delay {
		t.Errorf("delivered after %v, before the delay %v", took, delay)
	}
}

// TestCloseDropsAfterLinger: bytes due later than Linger after Close are
// dropped, and Close does not wait for them.
func TestCloseDropsAfterLinger(t *testing.T) {
	c, s := shapedPair(t, Link{Out: Path{Delay: time.Hour}})
	if _, err := c.Write([]byte("never")); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(s); len(got) != 0 || err != nil {
		t.Fatalf("peer read %q, %v; want nothing and EOF", got, err)
	}
}

// TestPeerEOF: the peer's bytes and then its close arrive, each no sooner
// than the In delay after they were sent, and EOF repeats.
func TestPeerEOF(t *testing.T) {
	const delay = 30 * time.Millisecond
	c, s := shapedPair(t, Link{In: Path{Delay: delay}})
	start := time.Now()
	s.Write([]byte("bye"))
	s.Close()
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "bye" {
		t.Fatalf("ReadAll = %q, %v", got, err)
	}
	if took := time.Since(start); took < delay {
		t.Errorf("EOF after %v, before the delay %v", took, delay)
	}
	if n, err := c.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Errorf("Read after EOF = %d, %v", n, err)
	}
}

// TestWriteAfterPeerGone: once the underlying connection fails, Writes
// return its error.
func TestWriteAfterPeerGone(t *testing.T) {
	c, s := shapedPair(t, Link{})
	s.(*net.TCPConn).SetLinger(0) // close with RST
	s.Close()
	var err error
	for i := 0; i < 1000 && err == nil; i++ {
		_, err = c.Write(make([]byte, 1024))
		time.Sleep(time.Millisecond)
	}
	if err == nil {
		t.Fatal("writes to a reset connection kept succeeding")
	}
	if errors.Is(err, net.ErrClosed) || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("got %v, want the underlying connection's error", err)
	}
}

// TestCloseLeavesNoGoroutine: once Close returns, the Conn's goroutines
// have ended, even with bytes still on their way in both directions.
func TestCloseLeavesNoGoroutine(t *testing.T) {
	before := goleak.IgnoreCurrent()
	c, s := tcpPair(t)
	l := Link{Out: Path{Delay: 20 * time.Millisecond}, In: Path{Delay: 20 * time.Millisecond}}
	sc, err := Wrap(c, l)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := Wrap(s, l.Reverse())
	if err != nil {
		t.Fatal(err)
	}
	sc.Write(make([]byte, 100000))
	ss.Write(make([]byte, 100000))
	if err := sc.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ss.Close(); err != nil {
		t.Fatal(err)
	}
	goleak.VerifyNone(t, before)
}
