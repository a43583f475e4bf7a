//go:build linux

package cardsim

import (
	"io"
	"net"
	"syscall"
)

// quickAck wraps a TCP connection so that every read first turns on
// TCP_QUICKACK: vpcd sends a frame's length and its body in two writes,
// and with Nagle's algorithm on its side the body waits for the
// acknowledgement of the length, which Linux would otherwise delay by
// some 40 ms. The option does not stick, so it is set before each read.
func quickAck(conn net.Conn) io.ReadWriter {
	tc, ok := conn.(*net.TCPConn)
	if !ok {
		return conn
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return conn
	}
	return &quickAckConn{TCPConn: tc, raw: raw}
}

type quickAckConn struct {
	*net.TCPConn
	raw syscall.RawConn
}

func (c *quickAckConn) Read(b []byte) (int, error) {
	c.raw.Control(func(fd uintptr) {
		syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_QUICKACK, 1)
	})
	return c.TCPConn.Read(b)
}
