package netshape

import (
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"time"
)

// Linger bounds how long Close goes on delivering what was written before
// it. Bytes due later than Linger after Close was called, or that the peer
// does not take by then, are dropped, as a kernel gives up on a peer that
// stops reading.
const Linger = time.Second

// readSize is the most one read from the underlying connection takes.
const readSize = 64 << 10

// aLongTimeAgo is a deadline in the past, to stop a blocked Read.
var aLongTimeAgo = time.Unix(1, 0)

// Conn is a net.Conn whose traffic a Link shapes. Writes enter a queue
// that one goroutine per Conn hands to the underlying connection as each
// part falls due; another reads the underlying connection, stamps what
// arrives and queues it for Read until it falls due. Read and Write block
// only on their own queue, never on a goroutine per write.
//
// A Conn is safe for concurrent use, as a net.Conn is: its deadlines and
// Close behave as net.Conn documents them.
type Conn struct {
	c      net.Conn
	link   Link
	buffer int

	out, in half
	kick    chan struct{} // wakes the flusher; capacity 1

	rdl, wdl *deadline

	closeOnce sync.Once
	closed    chan struct{} // closed when Close is called
	flushed   chan struct{} // closed when the flusher has returned
	drained   chan struct{} // closed when the reader has returned

	stats struct{ out, in counts }
}

var _ net.Conn = (*Conn)(nil)

// Wrap returns c shaped by l: l.Out applies to what the returned Conn
// writes, l.In to what it reads. One end's Link shapes both directions,
// so a connection is usually shaped at one end only; if both ends are
// shaped, their delays add up. Wrap starts two goroutines, which end when
// the Conn is closed.
//
// The Conn owns c: closing it closes c, and c must not be used otherwise.
// c's deadlines are the Conn's to set; the Conn keeps its own.
func Wrap(c net.Conn, l Link) (*Conn, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	seed := l.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	sc := &Conn{
		c:       c,
		link:    l,
		buffer:  l.buffer(),
		kick:    make(chan struct{}, 1),
		rdl:     newDeadline(),
		wdl:     newDeadline(),
		closed:  make(chan struct{}),
		flushed: make(chan struct{}),
		drained: make(chan struct{}),
	}
	sc.out.sh = newShaper(l.Out, l, seed)
	sc.in.sh = newShaper(l.In, l, seed+1)
	go sc.flush()
	go sc.drain()
	return sc, nil
}

// Link returns the Link the Conn was made with.
func (c *Conn) Link() Link { return c.link }

// Stats returns the traffic of this Conn so far.
func (c *Conn) Stats() Stats {
	return Stats{Out: c.stats.out.load(), In: c.stats.in.load()}
}

// LocalAddr returns the underlying connection's local address.
func (c *Conn) LocalAddr() net.Addr { return c.c.LocalAddr() }

// RemoteAddr returns the underlying connection's remote address.
func (c *Conn) RemoteAddr() net.Addr { return c.c.RemoteAddr() }

// SetDeadline sets the read and write deadlines, as net.Conn documents.
func (c *Conn) SetDeadline(t time.Time) error {
	if c.isClosed() {
		return c.opError("set", net.ErrClosed)
	}
	c.rdl.set(t)
	c.wdl.set(t)
	return nil
}

// SetReadDeadline sets the deadline for Read calls, pending ones included.
// A byte already written by the peer but not yet due counts as not yet
// arrived: Read times out rather than return it early.
func (c *Conn) SetReadDeadline(t time.Time) error {
	if c.isClosed() {
		return c.opError("set", net.ErrClosed)
	}
	c.rdl.set(t)
	return nil
}

// SetWriteDeadline sets the deadline for Write calls, pending ones
// included. A Write waits only while the Out queue is full; bytes it has
// queued are delivered whatever the deadline.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	if c.isClosed() {
		return c.opError("set", net.ErrClosed)
	}
	c.wdl.set(t)
	return nil
}

// Read reads bytes that have fallen due. It blocks until some have, the
// read deadline passes (an error wrapping os.ErrDeadlineExceeded whose
// Timeout method reports true), the Conn is closed (net.ErrClosed), or the
// peer's end of stream falls due (io.EOF, or the underlying connection's
// error).
func (c *Conn) Read(b []byte) (int, error) {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		if c.isClosed() {
			return 0, c.opError("read", net.ErrClosed)
		}
		dl := c.rdl.done()
		if isClosed(dl) {
			return 0, c.opError("read", os.ErrDeadlineExceeded)
		}
		h := &c.in
		h.mu.Lock()
		var wait time.Duration
		if !h.q.empty() {
			now := time.Now()
			first := h.q.front()
			if now.Before(first.due) {
				wait = first.due.Sub(now)
			} else if first.err != nil {
				err := first.err // left queued: every later Read gets it too
				h.mu.Unlock()
				return 0, err
			} else {
				n := h.take(b, now)
				h.mu.Unlock()
				return n, nil
			}
		}
		if wait > 0 && wait <= fineWait {
			h.mu.Unlock()
			sleep(wait)
			continue
		}
		changed := h.wait()
		h.mu.Unlock()
		var due <-chan time.Time
		if wait > 0 {
			if timer == nil {
				timer = time.NewTimer(wait - fineWait)
			} else {
				timer.Reset(wait - fineWait)
			}
			due = timer.C
		}
		select {
		case <-changed:
		case <-due:
		case <-dl:
		case <-c.closed:
		}
	}
}

// Write queues b for delivery and returns once all of it is queued. It
// blocks only while the Out queue is full, until there is room, the write
// deadline passes (an error wrapping os.ErrDeadlineExceeded whose Timeout
// method reports true) or the Conn is closed (net.ErrClosed). An error
// writing the underlying connection is returned by the Writes after it.
func (c *Conn) Write(b []byte) (int, error) {
	written := 0
	for {
		if written > 0 && len(b) == 0 {
			return written, nil
		}
		if c.isClosed() {
			return written, c.opError("write", net.ErrClosed)
		}
		dl := c.wdl.done()
		if isClosed(dl) {
			return written, c.opError("write", os.ErrDeadlineExceeded)
		}
		h := &c.out
		h.mu.Lock()
		if h.err != nil {
			err := h.err
			h.mu.Unlock()
			return written, err
		}
		if len(b) == 0 {
			h.mu.Unlock()
			return 0, nil
		}
		if room := c.buffer - h.q.bytes; room > 0 {
			n := min(room, len(b))
			data := make([]byte, n)
			copy(data, b)
			wasEmpty := h.q.empty()
			t := h.enqueue(time.Now(), data)
			h.mu.Unlock()
			c.stats.out.add(n, t)
			if c.link.Counter != nil {
				c.link.Counter.out.add(n, t)
			}
			if wasEmpty {
				c.wake()
			}
			b = b[n:]
			written += n
			continue
		}
		changed := h.wait()
		h.mu.Unlock()
		select {
		case <-changed:
		case <-dl:
		case <-c.closed:
		}
	}
}

// Close closes the Conn. Pending and later Reads and Writes return at once
// with net.ErrClosed. The bytes already written are still delivered, each
// at its due time, as a kernel delivers its send buffer after close(2), for
// as long as Linger allows; Close returns once that is done, the
// underlying connection is closed and the Conn's goroutines have ended, so
// it takes up to Linger. Bytes received but not yet read are dropped.
func (c *Conn) Close() error {
	first := false
	c.closeOnce.Do(func() { first = true; close(c.closed) })
	if !first {
		return c.opError("close", net.ErrClosed)
	}
	c.rdl.stop()
	c.wdl.stop()
	// Stop the reader: nothing more will be read.
	_ = c.c.SetReadDeadline(aLongTimeAgo)
	c.in.mu.Lock()
	c.in.notify()
	c.in.mu.Unlock()

	// Let the flusher deliver what is queued, within Linger.
	by := time.Now().Add(Linger)
	c.out.mu.Lock()
	c.out.closeBy = by
	c.out.notify()
	c.out.mu.Unlock()
	_ = c.c.SetWriteDeadline(by)
	c.wake()
	<-c.flushed

	err := c.c.Close()
	<-c.drained
	return err
}

func (c *Conn) isClosed() bool { return isClosed(c.closed) }

// wake wakes the flusher, if it is waiting.
func (c *Conn) wake() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// opError wraps err as the net package reports errors on a connection.
func (c *Conn) opError(op string, err error) error {
	e := &net.OpError{Op: op, Source: c.c.LocalAddr(), Addr: c.c.RemoteAddr(), Err: err}
	if e.Source != nil {
		e.Net = e.Source.Network()
	}
	return e
}
