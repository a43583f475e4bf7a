//go:build cgo

package cgoloop

import (
	"testing"
	"time"
)

func TestRunMatchesRunGo(t *testing.T) {
	for _, n := range []uint64{0, 1, 2, 1000, 123457} {
		if c, g := Run(n), RunGo(n); c != g {
			t.Errorf("n=%d: C %#x, Go %#x", n, c, g)
		}
	}
	// The loop is a xorshift generator: its first round from the seed.
	x := uint64(seed)
	x ^= x << 13
	x ^= x >> 7
	x ^= x << 17
	if got := Run(1); got != x {
		t.Errorf("Run(1) = %#x, want %#x", got, x)
	}
}

func TestCalibrate(t *testing.T) {
	if n := Calibrate(0); n != 0 {
		t.Errorf("Calibrate(0) = %d", n)
	}
	const d = 200 * time.Microsecond
	n := Calibrate(d)
	// A loaded machine only makes runs slower, so a loop far shorter
	// than asked is a calibration bug.
	if best := fastest(Run, n, 20); best < d/4 {
		t.Errorf("Calibrate(%v) = %d rounds, which ran in %v", d, n, best)
	}
}
