//go:build !linux

package netshape

import "time"

// sleep waits for d on a runtime timer: see fineWait.
func sleep(d time.Duration) { time.Sleep(d) }
