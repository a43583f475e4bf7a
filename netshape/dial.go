package netshape

import (
	"context"
	"net"
	"time"
)

// DialFunc dials a connection, as net.Dialer.DialContext and
// http.Transport.DialContext do.
type DialFunc func(ctx context.Context, network, address string) (net.Conn, error)

// Dialer returns a DialFunc that connects with d (a zero net.Dialer if d is
// nil) and returns the connection wrapped with l, a *Conn. Since TCP's
// handshake costs a round trip before the client can send, the DialFunc
// waits l.RTT() after connecting before it returns, or returns ctx's error
// if ctx ends first. An invalid l makes every dial fail without
// connecting.
func Dialer(l Link, d *net.Dialer) DialFunc {
	if d == nil {
		d = new(net.Dialer)
	}
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		if err := l.Validate(); err != nil {
			return nil, err
		}
		c, err := d.DialContext(ctx, network, address)
		if err != nil {
			return nil, err
		}
		if rtt := l.RTT(); rtt > 0 {
			t := time.NewTimer(rtt)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				c.Close()
				return nil, ctx.Err()
			}
		}
		return wrap(c, l)
	}
}

// Listener is a net.Listener whose accepted connections are wrapped with a
// Link, for the server end of connections whose client end is not wrapped.
// It adds no handshake delay: the client's first bytes still take In.Delay
// to arrive.
type Listener struct {
	net.Listener
	link Link
}

// NewListener returns ln wrapping each connection it accepts with l, as
// seen from the server: l.Out shapes what the server writes.
func NewListener(ln net.Listener, l Link) (*Listener, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	return &Listener{Listener: ln, link: l}, nil
}

// Accept waits for the next connection and returns it wrapped, a *Conn.
func (l *Listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return wrap(c, l.link)
}

// wrap is Wrap returning a net.Conn, never a nil *Conn in one.
func wrap(c net.Conn, l Link) (net.Conn, error) {
	sc, err := Wrap(c, l)
	if err != nil {
		c.Close()
		return nil, err
	}
	return sc, nil
}
