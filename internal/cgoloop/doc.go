// Package cgoloop is a yardstick for benchmarks of backends that call C:
// a loop of CPU-bound work, with no locks, no memory and no system calls,
// that runs either in C through cgo (Run) or in Go (RunGo).
//
// Timed like a sign, from one goroutine and from several, it shows how far
// any work that crosses into C can scale on the machine at hand, apart from
// what the C library itself does. A cgo call that outlasts a sysmon tick
// (20 µs) is a system call to the Go scheduler: when no P is idle, sysmon
// takes the caller's P away, hands it to another thread, and the caller
// gets one back through the scheduler when the call returns
// (golang/go#19574). Each sign then pays for thread wake-ups that C threads
// and Go code never see. docs/measurements.md has what the pkcs11
// package's BenchmarkSignParallel found with it.
package cgoloop

import "time"

// seed starts the loop; any non-zero value will do.
const seed = 88172645463325252

// RunGo runs n rounds of the loop in Go and returns its state, which is
// the same as Run's for the same n.
func RunGo(n uint64) uint64 {
	x := uint64(seed)
	for range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// calibrate returns the number of rounds that take about d on one thread,
// given measure(n), how long n rounds take: it measures runs of growing
// length until one lasts d or a millisecond, and scales from there.
func calibrate(measure func(n uint64) time.Duration, d time.Duration) uint64 {
	if d <= 0 {
		return 0
	}
	n := uint64(1024)
	for {
		best := measure(n)
		if best >= time.Millisecond || best >= d {
			return uint64(float64(n) * float64(d) / float64(best))
		}
		n *= 2
	}
}

// fastest returns the shortest of tries runs of n rounds: on a loaded
// machine runs only get slower.
func fastest(run func(uint64) uint64, n uint64, tries int) time.Duration {
	best := time.Duration(1<<63 - 1)
	for range tries {
		start := time.Now()
		run(n)
		if e := time.Since(start); e < best {
			best = e
		}
	}
	return best
}
