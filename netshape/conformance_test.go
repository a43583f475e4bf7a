package netshape

import (
	"net"
	"testing"
	"time"

	"golang.org/x/net/nettest"
)

// TestConformance runs x/net's net.Conn conformance suite on shaped
// connections: shaped at one end (the other a plain socket, both ways
// round) and at both ends, with links that exercise each part of the
// model. With -short it runs only two of the links. Its cases run in
// parallel: each has its own loopback connection, and most of their time
// is spent waiting on deadlines, delays and Close's Linger.
func TestConformance(t *testing.T) {
	t.Parallel()
	links := map[string]Link{
		"zero":      {},
		"delay":     {Out: Path{Delay: 200 * time.Microsecond}, In: Path{Delay: 300 * time.Microsecond}},
		"jitter":    {Out: Path{Delay: 100 * time.Microsecond, Jitter: 300 * time.Microsecond}, In: Path{Jitter: 200 * time.Microsecond}, Seed: 1},
		"bandwidth": {Out: Path{Bandwidth: 20 << 20}, In: Path{Bandwidth: 20 << 20}, Buffer: 64 << 10},
		"loss":      {Out: Path{Loss: 0.05, Retransmit: time.Millisecond}, In: Path{Loss: 0.05, Retransmit: time.Millisecond}, Seed: 2},
	}
	for name, l := range links {
		if testing.Short() && name != "zero" && name != "jitter" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for _, ends := range []string{"client", "server", "both"} {
				t.Run(ends, func(t *testing.T) {
					t.Parallel()
					nettest.TestConn(t, func() (c1, c2 net.Conn, stop func(), err error) {
						c1, c2 = tcpPair(t)
						if ends == "client" || ends == "both" {
							if c1, err = Wrap(c1, l); err != nil {
								return nil, nil, nil, err
							}
						}
						if ends == "server" || ends == "both" {
							if c2, err = Wrap(c2, l.Reverse()); err != nil {
								return nil, nil, nil, err
							}
						}
						return c1, c2, func() { c1.Close(); c2.Close() }, nil
					})
				})
			}
		})
	}
}
