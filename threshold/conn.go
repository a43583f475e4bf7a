package threshold

import (
	"net"
	"sync/atomic"
)

// Counters are byte counts on one link between the coordinator and a
// party, from one side. Payload counts frame bodies, the protocol fields
// (message included); Wire counts every byte written to or read from the
// socket under TLS: frame headers, TLS records and handshakes.
type Counters struct {
	PayloadOut, PayloadIn uint64
	WireOut, WireIn       uint64
	Frames                uint64 // frames sent and received
}

type counters struct {
	payloadOut, payloadIn, wireOut, wireIn, frames atomic.Uint64
}

func (c *counters) snapshot() Counters {
	return Counters{PayloadOut: c.payloadOut.Load(), PayloadIn: c.payloadIn.Load(),
		WireOut: c.wireOut.Load(), WireIn: c.wireIn.Load(), Frames: c.frames.Load()}
}

// countingConn counts the bytes that pass through a raw connection,
// beneath TLS.
type countingConn struct {
	net.Conn
	c *counters
}

func (cc *countingConn) Read(p []byte) (int, error) {
	n, err := cc.Conn.Read(p)
	cc.c.wireIn.Add(uint64(n))
	return n, err
}

func (cc *countingConn) Write(p []byte) (int, error) {
	n, err := cc.Conn.Write(p)
	cc.c.wireOut.Add(uint64(n))
	return n, err
}
