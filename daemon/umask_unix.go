//go:build unix

package daemon

import (
	"net"
	"sync"
	"syscall"
)

// umaskMu serialises listenPrivate's umask changes: the umask is the
// process's, and two interleaved set-and-restore pairs would leave it 077.
var umaskMu sync.Mutex

// listenPrivate is net.Listen with the process umask at 077, so that the
// socket file is created with mode 0700 at most. A file another goroutine
// creates meanwhile gets a stricter mode, never a looser one.
func listenPrivate(network, address string) (net.Listener, error) {
	umaskMu.Lock()
	defer umaskMu.Unlock()
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	return net.Listen(network, address)
}
