package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// startFsyncProbe writes one 4 KiB block in place in a file under dir and
// fdatasyncs it, as the guard writes its state, every interval while a
// scenario runs; stop ends it and returns each write's time. It is the
// disk's own cost of a durable write, measured under the same load.
func startFsyncProbe(t *testing.T, dir string, interval time.Duration) (stop func() []time.Duration) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, "fsync-probe"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	block := make([]byte, 4096)
	if _, err := f.WriteAt(block, 0); err != nil || f.Sync() != nil {
		t.Fatalf("fsync probe: %v", err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	var ds []time.Duration
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			block[0] = byte(i)
			start := time.Now()
			if _, err := f.WriteAt(block, 0); err != nil {
				return
			}
			if syscall.Fdatasync(int(f.Fd())) != nil {
				return
			}
			ds = append(ds, time.Since(start))
		}
	}()
	return func() []time.Duration {
		close(done)
		wg.Wait()
		f.Close()
		return ds
	}
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loadAverage is the system's one-minute load average, as /proc/loadavg
// has it, or "–".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "–"
}
