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
