// Package proctest starts the repository's commands as processes for
// tests: build the package in the current directory (once per test
// binary), start it, read the address it prints first, and stop it with
// SIGTERM; and check what a build of a package links (LinksNone).
package proctest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// LinkFlags are the -ldflags the commands are built with in tests: no
// symbol table and no DWARF, which makes the link step, most of a build
// whose packages are in the build cache, markedly shorter. The program
// runs the same.
const LinkFlags = "-s -w"

var (
	buildMu     sync.Mutex
	buildDir    string                // made by the first build, removed by Main
	builds      = map[string]*build{} // by directory, package and name
	buildCtx    context.Context       // ends when Main removes the builds
	buildCancel context.CancelFunc
	prebuilds   sync.WaitGroup
)

type build struct {
	once sync.Once
	bin  string
	err  error
}

// Build builds the command in the current directory as name, once per
// test binary however many tests ask (concurrently or not), and returns
// the executable's path. Tests must not modify the executable.
func Build(t testing.TB, name string) string {
	t.Helper()
	return BuildPackage(t, ".", name)
}

// BuildPackage builds the command pkg (an import path, or a directory
// relative to the current one) as name, once per test binary, and
// returns the executable's path.
func BuildPackage(t testing.TB, pkg, name string) string {
	t.Helper()
	bin, err := buildOnce(pkg, name)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// Prebuild starts building pkg as name in the background, for a
// TestMain to overlap the build with the tests that do not need it; a
// later BuildPackage of the same pkg and name waits for it. Only a
// package whose TestMain returns through Main may call it.
func Prebuild(pkg, name string) {
	prebuilds.Add(1)
	go func() {
		defer prebuilds.Done()
		_, _ = buildOnce(pkg, name) // a failure is reported by BuildPackage
	}()
}

func buildOnce(pkg, name string) (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	buildMu.Lock()
	if buildDir == "" {
		if buildDir, err = os.MkdirTemp("", "proctest-"); err != nil {
			buildMu.Unlock()
			return "", err
		}
		buildCtx, buildCancel = context.WithCancel(context.Background())
	}
	key := wd + "\x00" + pkg + "\x00" + name
	b := builds[key]
	if b == nil {
		b = &build{bin: filepath.Join(buildDir, strconv.Itoa(len(builds)), name)}
		builds[key] = b
	}
	ctx := buildCtx
	buildMu.Unlock()
	b.once.Do(func() {
		if err := os.MkdirAll(filepath.Dir(b.bin), 0o755); err != nil {
			b.err = err
			return
		}
		cmd := exec.CommandContext(ctx, "go", "build", "-ldflags="+LinkFlags, "-o", b.bin, pkg)
		// Stopped by Main, the go command is interrupted, so that it stops
		// its compiler and linker and removes its work directory.
		cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
		cmd.WaitDelay = 10 * time.Second
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.err = fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	})
	return b.bin, b.err
}

// Main runs the tests and removes what was built (stopping a Prebuild
// still running); a package's TestMain calls it as
// os.Exit(proctest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	buildMu.Lock()
	if buildCancel != nil {
		buildCancel()
	}
	buildMu.Unlock()
	prebuilds.Wait()
	buildMu.Lock()
	if buildDir != "" {
		os.RemoveAll(buildDir)
		buildDir = ""
		builds = map[string]*build{}
	}
	buildMu.Unlock()
	return code
}

// Start builds the command in the current directory as name (see Build),
// starts it with args and returns it with the first line it printed,
// which must begin with prefix (the address it serves). The process is
// killed when the test ends.
func Start(t testing.TB, name, prefix string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	return StartPackage(t, ".", name, prefix, args...)
}

// StartPackage is Start for the command pkg (see BuildPackage). The rest
// of what the command prints on stdout is discarded.
func StartPackage(t testing.TB, pkg, name, prefix string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	bin := BuildPackage(t, pkg, name)
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &lockedBuilder{}
	cmd.Stderr = stderr
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
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case l := <-line:
		if l == "" || !strings.HasPrefix(l, prefix) {
			t.Fatalf("stdout %q, want a line starting %q; stderr:\n%s", l, prefix, stderr.String())
		}
		return cmd, l
	case <-time.After(60 * time.Second): // only stops a hang
		t.Fatalf("no address on stdout; stderr:\n%s", stderr.String())
	}
	return nil, ""
}

// lockedBuilder is a strings.Builder that a process writes while a test
// may read it.
type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
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
