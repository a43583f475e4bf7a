//go:build unix

package fileopen

import "syscall"

// openNoFollow says whether openFlags(NoFollow) refuses symbolic links
// itself.
const openNoFollow = true

// openFlags are added to the caller's flags: a FIFO or device does not
// block the open, and with NoFollow no symbolic link is followed.
func openFlags(links Links) int {
	if links == NoFollow {
		return syscall.O_NONBLOCK | syscall.O_NOFOLLOW
	}
	return syscall.O_NONBLOCK
}
