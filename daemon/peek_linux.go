package daemon

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// peek copies into b the first bytes conn has received and not yet
// read, without reading them, and returns how many; 0 when there are
// none or they cannot be seen.
func peek(conn net.Conn, b []byte) int {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return 0
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	_ = raw.Control(func(fd uintptr) {
		if m, _, err := unix.Recvfrom(int(fd), b, unix.MSG_PEEK|unix.MSG_DONTWAIT); err == nil {
			n = m
		}
	})
	return n
}
