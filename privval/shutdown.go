package privval

import (
	"context"
	"crypto/ed25519"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// ErrShutdown is what Run and Serve return after Shutdown has stopped
// them.
var ErrShutdown = errors.New("privval: shut down")

// drain lets Shutdown stop an Endpoint or Server between requests: it
// knows each connection and whether a request on it is being served.
type drain struct {
	draining atomic.Bool

	mu       sync.Mutex
	conns    map[*connState]struct{}
	stopping chan struct{} // closed by Shutdown
	running  int           // Run or Serve calls in progress
	done     chan struct{} // closed when draining and running is 0
	doneOnce sync.Once
}

// connState is one connection past its handshake.
type connState struct {
	conn net.Conn
	busy atomic.Bool // a request read is being served
}

func (d *drain) init() {
	d.conns = map[*connState]struct{}{}
	d.stopping = make(chan struct{})
	d.done = make(chan struct{})
}

// enter counts a Run or Serve in; it is refused once Shutdown began.
func (d *drain) enter() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.draining.Load() {
		return ErrShutdown
	}
	d.running++
	return nil
}

// leave counts a Run or Serve out.
func (d *drain) leave() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.running--
	if d.draining.Load() && d.running == 0 {
		d.doneOnce.Do(func() { close(d.done) })
	}
}

func (d *drain) isDraining() bool { return d.draining.Load() }

// add records a connection that completed its handshake; it is refused
// once Shutdown began.
func (d *drain) add(conn net.Conn) (*connState, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.draining.Load() {
		return nil, false
	}
	st := &connState{conn: conn}
	d.conns[st] = struct{}{}
	return st, true
}

func (d *drain) remove(st *connState) {
	d.mu.Lock()
	delete(d.conns, st)
	d.mu.Unlock()
}

// idle marks a connection as waiting for its next request and sets its
// read deadline (zero: none). It returns false, and the connection must
// end, once Shutdown began. The order — idle, deadline, then the check —
// is what makes it safe without a lock: either this check sees Shutdown,
// or Shutdown, which sets draining before it looks, sees the connection
// idle and sets its deadline in the past after this one.
func (d *drain) idle(st *connState, deadline time.Time) (bool, error) {
	st.busy.Store(false)
	err := st.conn.SetReadDeadline(deadline)
	if d.draining.Load() {
		return false, nil
	}
	return true, err
}

// busy marks a connection as serving a request just read.
func (d *drain) busy(st *connState) { st.busy.Store(true) }

// shutdown stops new connections and requests, interrupts the reads of
// idle connections and waits for every Run and Serve to return.
func (d *drain) shutdown(ctx context.Context) error {
	d.mu.Lock()
	if !d.draining.Load() {
		d.draining.Store(true)
		close(d.stopping)
		for st := range d.conns {
			if !st.busy.Load() {
				_ = st.conn.SetReadDeadline(time.Unix(1, 0))
			}
		}
		if d.running == 0 {
			d.doneOnce.Do(func() { close(d.done) })
		}
	}
	d.mu.Unlock()
	select {
	case <-d.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Shutdown stops the Endpoint gracefully: a request being served is
// answered, then its connection is closed, no other request is read and
// no dial is made, and Run returns ErrShutdown. Shutdown returns when Run
// has returned (at once if it is not running), or ctx's error when ctx
// ends first; cancel Run's context then to stop it at once. The Endpoint
// cannot run again afterwards.
func (e *Endpoint) Shutdown(ctx context.Context) error { return e.drain.shutdown(ctx) }

// Shutdown stops the Server gracefully: it closes the listener, lets each
// connection finish the request it is serving, closes them all, and
// Serve returns ErrShutdown. Shutdown returns when Serve has returned (at
// once if it is not serving), or ctx's error when ctx ends first; cancel
// Serve's context then to stop it at once. The Server cannot serve again
// afterwards.
func (s *Server) Shutdown(ctx context.Context) error { return s.drain.shutdown(ctx) }

// connected reports a connection that completed its handshake.
func (c *core) connected(peer ed25519.PublicKey) {
	c.conns.Add(1)
	if c.onConnect != nil {
		c.onConnect(peer)
	}
}
