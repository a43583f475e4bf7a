//go:build cgo

package cgoloop

/*
#include <stdint.h>

static uint64_t sk_loop(uint64_t n, uint64_t x) {
	for (uint64_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	return x;
}
*/
import "C"

import "time"

// Run runs n rounds of the loop in C, in one cgo call, and returns its
// state.
func Run(n uint64) uint64 { return uint64(C.sk_loop(C.uint64_t(n), seed)) }

// Calibrate returns the number of rounds for which Run takes about d on one
// thread of this machine (its fastest of a few tries).
func Calibrate(d time.Duration) uint64 {
	return calibrate(func(n uint64) time.Duration { return fastest(Run, n, 5) }, d)
}
