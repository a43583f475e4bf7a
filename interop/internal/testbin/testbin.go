// Package testbin is the plumbing the interop module's tests share (the
// interop package's and interop/scenarios'): building signerkit's commands
// and the chains' own binaries, running the simulators, collecting a
// process's output, picking ports, making a gno root, listing a WAL's
// files and reading a /metrics page. It is for tests only: every function
// that can fail takes a testing.TB and fails the test.
package testbin

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	binsOnce sync.Once
	binsDir  string
	binsErr  error
)

// Signerkit returns the path of one of the main module's commands,
// "signerkit", "ledgersim" or "yubihsmsim". SIGNERKIT_BIN_DIR, when set,
// names a directory holding the three already built; otherwise they are
// built once per test process, from the main module (the one this module
// replaces with its parent directory), into a temporary directory.
func Signerkit(t testing.TB, name string) string {
	t.Helper()
	binsOnce.Do(func() {
		if d := os.Getenv("SIGNERKIT_BIN_DIR"); d != "" {
			binsDir = d
			return
		}
		root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/signerkit/signerkit").Output()
		if err != nil {
			binsErr = fmt.Errorf("go list -m github.com/signerkit/signerkit: %v", err)
			return
		}
		if binsDir, binsErr = os.MkdirTemp("", "signerkit-interop-bin-"); binsErr != nil {
			return
		}
		for _, c := range []string{"signerkit", "ledgersim", "yubihsmsim"} {
			cmd := exec.Command("go", "build", "-o", filepath.Join(binsDir, c), "./cmd/"+c)
			cmd.Dir = strings.TrimSpace(string(root))
			if out, err := cmd.CombinedOutput(); err != nil {
				binsErr = fmt.Errorf("go build ./cmd/%s: %v\n%s", c, err, out)
				return
			}
		}
	})
	if binsErr != nil {
		t.Fatal(binsErr)
	}
	return filepath.Join(binsDir, name)
}

// BuildTool builds the command pkg, of a module this module requires, and
// returns its path. The binary is kept in the user's cache directory under
// its module's version, so later runs reuse it (gnoland takes minutes to
// build).
func BuildTool(pkg string) (string, error) {
	ver, err := exec.Command("go", "list", "-f", "{{.Module.Path}}@{{.Module.Version}}", pkg).Output()
	if err != nil {
		return "", fmt.Errorf("go list %s: %v", pkg, err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "signerkit-interop-tools", strings.NewReplacer("/", "_", "@", "_").Replace(strings.TrimSpace(string(ver))))
	path := filepath.Join(dir, filepath.Base(pkg))
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
	if out, err := exec.Command("go", "build", "-o", tmp, pkg).CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
	}
	return path, os.Rename(tmp, path)
}

// LockedBuffer collects a process's output, written by its pipes and read
// by the test.
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// StartSim starts a simulator command (cmd/ledgersim, cmd/yubihsmsim) at
// path with args, killed at the test's end, and returns the address it
// prints on its first line.
func StartSim(t testing.TB, path string, args ...string) string {
	t.Helper()
	name := filepath.Base(path)
	cmd := exec.Command(path, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr LockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		s.Scan()
		line <- strings.TrimSpace(s.Text())
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case l := <-line:
		if l == "" {
			t.Fatalf("%s printed no address:\n%s", name, stderr.String())
		}
		return l
	case <-time.After(30 * time.Second):
		t.Fatalf("%s printed no address within 30 s:\n%s", name, stderr.String())
	}
	return ""
}

var (
	portsMu    sync.Mutex
	portsGiven = map[int]bool{}
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago. It
// picks one below Linux's ephemeral range (32768 and up) when it can, where
// no outgoing connection of another process takes it before the caller
// listens on it (a node may listen seconds later, after its genesis).
func FreePort(t testing.TB) int {
	t.Helper()
	portsMu.Lock()
	defer portsMu.Unlock()
	for range 64 {
		port := 20000 + rand.IntN(12000)
		if portsGiven[port] {
			continue // given to this process already: its listener may not be up yet
		}
		if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			l.Close()
			portsGiven[port] = true
			return port
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// GnoRoot makes a gno root that has the standard libraries (of the gno
// module this module requires) and no example packages, so that a node's
// genesis is made in seconds.
func GnoRoot(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/gnolang/gno").Output()
	if err != nil {
		t.Fatalf("go list -m github.com/gnolang/gno: %v", err)
	}
	src := strings.TrimSpace(string(out))
	root := t.TempDir()
	for _, d := range []string{"gnovm", "gno.land"} {
		if err := os.Symlink(filepath.Join(src, d), filepath.Join(root, d)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(root, "examples"), 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

// WALFiles lists a WAL group's files in order: wal.000, wal.001, …, then
// the head, wal.
func WALFiles(t testing.TB, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "wal.[0-9]*"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	head := filepath.Join(dir, "wal")
	if _, err := os.Stat(head); err != nil {
		t.Fatalf("no WAL in %s: %v", dir, err)
	}
	return append(files, head)
}

// Tail is the last n bytes of s.
func Tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// Scrape returns the text of the /metrics page under base (http://host:port).
func Scrape(base string) (string, error) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(base + "/metrics")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// Metric returns the value of the first series of name in a /metrics
// text whose labels include every name/value pair of labels, or -1.
func Metric(text, name string, labels ...string) float64 {
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(l, name+"{") {
			continue
		}
		ok := true
		for i := 0; i+1 < len(labels); i += 2 {
			ok = ok && strings.Contains(l, labels[i]+`="`+labels[i+1]+`"`)
		}
		if ok {
			v, _ := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
			return v
		}
	}
	return -1
}

// SumMetric adds up every series of a counter or gauge in a /metrics text.
func SumMetric(text, name string) float64 {
	var sum float64
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(l, name+"{") && !strings.HasPrefix(l, name+" ") {
			continue
		}
		if v, err := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64); err == nil {
			sum += v
		}
	}
	return sum
}
