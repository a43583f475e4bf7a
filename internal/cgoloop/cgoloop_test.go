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
	// A machine on which a round takes 3 ns; one on which every run takes
	// 40 µs more than its rounds, so the first run (1024 rounds) already
	// lasts past d and the count is scaled from it; and a very slow one.
	for _, tc := range []struct {
		name string
		time func(n uint64) time.Duration
		d    time.Duration
		want uint64
	}{
		{"3ns", func(n uint64) time.Duration { return time.Duration(3 * n) }, 75 * time.Microsecond, 25000},
		{"slow-clock", func(n uint64) time.Duration { return time.Duration(n) + 40*time.Microsecond }, 10 * time.Microsecond, 1024 * 10000 / 41024},
		{"slow", func(n uint64) time.Duration { return time.Duration(n) * time.Millisecond }, 10 * time.Millisecond, 10},
	} {
		if got := calibrate(tc.time, tc.d); got != tc.want {
			t.Errorf("%s: calibrate(%v) = %d rounds, want %d", tc.name, tc.d, got, tc.want)
		}
	}
}
