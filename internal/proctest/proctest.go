// Package proctest starts the repository's commands as processes for
// tests: build the package in the current directory, start it, read the
// address it prints first, and stop it with SIGTERM.
package proctest

import (
	"bufio"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Start builds the command in the current directory as name, starts it
// with args and returns it with the first line it printed, which must
// begin with prefix (the address it serves). The process is killed when
// the test ends.
func Start(t testing.TB, name, prefix string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		s.Scan()
		line <- s.Text()
	}()
	select {
	case l := <-line:
		if !strings.HasPrefix(l, prefix) {
			t.Fatalf("stdout %q, want a line starting %q; stderr:\n%s", l, prefix, stderr.String())
		}
		return cmd, l
	case <-time.After(30 * time.Second):
		t.Fatalf("no address on stdout; stderr:\n%s", stderr.String())
	}
	return nil, ""
}

// Stop sends SIGTERM and checks that the command exits 0.
func Stop(t testing.TB, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("still running 10 s after SIGTERM")
	}
}
