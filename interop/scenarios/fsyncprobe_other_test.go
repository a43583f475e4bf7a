//go:build !linux

package scenarios

import (
	"testing"
	"time"
)

// startFsyncProbe measures nothing where there is no fdatasync(2).
func startFsyncProbe(t *testing.T, dir string, interval time.Duration) (stop func() []time.Duration) {
	return func() []time.Duration { return nil }
}

// cpuTime is not measured here: bcrypt's floor then uses its wall time.
func cpuTime() time.Duration { return 0 }

// loadAverage is not read here.
func loadAverage() string { return "–" }
