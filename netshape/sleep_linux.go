package netshape

import (
	"syscall"
	"time"
)

// sleep blocks the calling thread for d in nanosleep(2): see fineWait.
func sleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for {
		var rest syscall.Timespec
		if err := syscall.Nanosleep(&ts, &rest); err != syscall.EINTR {
			return
		}
		ts = rest
	}
}
