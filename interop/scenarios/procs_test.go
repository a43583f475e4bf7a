package scenarios

import (
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/signerkit/signerkit/interop/internal/testbin"
)

// Binaries: signerkit and the simulators are built from the main module
// once per test process; gnoland from the gno module this module requires,
// cached under the user's cache directory by module version (the same
// place the interop tests keep it): package testbin.

func skCommand(t *testing.T, name string) string { return testbin.Signerkit(t, name) }

var (
	gnolandOnce sync.Once
	gnolandPath string
	gnolandErr  error
)

const gnolandPkg = "github.com/gnolang/gno/gno.land/cmd/gnoland"

func gnolandCommand(t *testing.T) string {
	t.Helper()
	gnolandOnce.Do(func() { gnolandPath, gnolandErr = testbin.BuildTool(gnolandPkg) })
	if gnolandErr != nil {
		t.Fatal(gnolandErr)
	}
	return gnolandPath
}

// syncBuf is a process's output, written by its pipes and read by the test.
type syncBuf = testbin.LockedBuffer

// proc is a child process the test owns; it is killed at the test's end.
type proc struct {
	name string
	cmd  *exec.Cmd
	out  *syncBuf
	exit chan struct{}
	err  error
}

func start(t *testing.T, name string, cmd *exec.Cmd) *proc {
	t.Helper()
	p := &proc{name: name, cmd: cmd, out: &syncBuf{}, exit: make(chan struct{})}
	if cmd.Stdout == nil {
		cmd.Stdout = p.out
	}
	cmd.Stderr = p.out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	go func() { p.err = cmd.Wait(); close(p.exit) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.exit
	})
	return p
}

func (p *proc) exited() bool {
	select {
	case <-p.exit:
		return true
	default:
		return false
	}
}

// terminate sends SIGTERM and waits (bounded) for the exit; then SIGKILL.
func (p *proc) terminate(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exit:
	case <-time.After(20 * time.Second):
		t.Logf("%s did not stop on SIGTERM; killed", p.name)
		_ = p.cmd.Process.Kill()
		<-p.exit
	}
}

// tailOf is the last n bytes of s, marked as cut when it is.
func tailOf(s string, n int) string {
	if len(s) > n {
		return "…" + testbin.Tail(s, n)
	}
	return s
}

// startSimulator starts cmd/ledgersim or cmd/yubihsmsim and returns the
// address it prints on its first line.
func startSimulator(t *testing.T, name string, args ...string) string {
	t.Helper()
	return testbin.StartSim(t, skCommand(t, name), args...)
}

func loopbackPort(t *testing.T) int { return testbin.FreePort(t) }

// scrape returns a daemon's /metrics text.
func scrape(url string) (string, error) { return testbin.Scrape(url) }
