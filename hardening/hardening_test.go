package hardening

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

func TestAlloc(t *testing.T) {
	b := Alloc(100)
	m := b.Bytes()
	if len(m) != 100 {
		t.Fatalf("%d bytes, want 100", len(m))
	}
	for i := range m {
		if m[i] != 0 {
			t.Fatal("not zeroed")
		}
		m[i] = 0xaa
	}
	if runtime.GOOS == "linux" && !b.NoDump() {
		t.Error("Linux buffer not marked MADV_DONTDUMP")
	}
	t.Logf("locked %v, out of core dumps %v", b.Locked(), b.NoDump())
	whole := b.Bytes()[:100:100]
	if !b.mapped {
		defer func() {
			for _, c := range whole {
				if c != 0 {
					t.Error("Free did not wipe")
				}
			}
		}()
	}
	b.Free()
	b.Free() // idempotent
	if b.Bytes() != nil {
		t.Error("Bytes after Free")
	}
}

// TestDisableCoreDumps runs in a child process, so the test process keeps
// its own settings.
func TestDisableCoreDumps(t *testing.T) {
	if os.Getenv("HARDENING_CHILD") == "1" {
		if err := DisableCoreDumps(); err != nil {
			if errors.Is(err, ErrUnsupported) {
				os.Exit(3)
			}
			t.Fatal(err)
		}
		if runtime.GOOS == "linux" {
			status, err := os.ReadFile("/proc/self/limits")
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range strings.Split(string(status), "\n") {
				if strings.HasPrefix(l, "Max core file size") && !strings.Contains(l, " 0 ") {
					t.Fatalf("core limit not 0: %s", l)
				}
			}
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestDisableCoreDumps$")
	cmd.Env = append(os.Environ(), "HARDENING_CHILD=1")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 3 {
		t.Skip("not supported on", runtime.GOOS)
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}
