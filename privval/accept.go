package privval

import (
	"errors"
	"net"
	"syscall"
	"time"

	"github.com/signerkit/signerkit/internal/backoff"
)

// Bounds of the wait after a temporary Accept error: 5 ms, doubling with
// each further error in a row, up to 1 s — what net/http's Server.Serve
// does.
const (
	MinAcceptBackoff = 5 * time.Millisecond
	MaxAcceptBackoff = time.Second
)

// TemporaryAcceptError reports whether err, returned by a listener's
// Accept, is one a server outlives: the process or the system is out of
// file descriptors (EMFILE, ENFILE), of buffers or memory (ENOBUFS,
// ENOMEM), a connection was aborted or reset, or failed a protocol or
// firewall check, before it was accepted (ECONNABORTED, ECONNRESET,
// EPROTO, EPERM), or a net.Error that says it is a timeout or temporary.
// A closed listener is not temporary.
func TemporaryAcceptError(err error) bool {
	if err == nil || errors.Is(err, net.ErrClosed) {
		return false
	}
	for _, e := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM,
		syscall.ECONNABORTED, syscall.ECONNRESET, syscall.EPROTO, syscall.EPERM, syscall.EINTR, syscall.EAGAIN} {
		if errors.Is(err, e) {
			return true
		}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	var te interface{ Temporary() bool }
	return errors.As(err, &te) && te.Temporary()
}

// OutOfDescriptors reports whether err is EMFILE or ENFILE: no file
// descriptor was left for the connection Accept would have returned.
func OutOfDescriptors(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}

// acceptBackoff returns the waits after temporary Accept errors in a row:
// MinAcceptBackoff, doubling up to MaxAcceptBackoff, without jitter (the
// listener is local); Reset after a success.
func acceptBackoff() backoff.Backoff {
	return backoff.Backoff{Min: MinAcceptBackoff, Max: MaxAcceptBackoff}
}
