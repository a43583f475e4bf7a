//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package thresholdbench

import "time"

// cpuTime reports that the process's CPU time is unknown here.
func cpuTime() (time.Duration, bool) { return 0, false }
