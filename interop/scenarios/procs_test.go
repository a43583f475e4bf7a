package scenarios

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
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

// Binaries: signerkit and the simulators are built from the main module
// once per test process; gnoland from the gno module this module requires,
// cached under the user's cache directory by module version (the same
// place the interop tests keep it).

var (
	skOnce sync.Once
	skDir  string
	skErr  error
)

func skCommand(t *testing.T, name string) string {
	t.Helper()
	skOnce.Do(func() {
		skDir, skErr = os.MkdirTemp("", "signerkit-scenarios-bin-")
		for _, c := range []string{"signerkit", "ledgersim", "yubihsmsim"} {
			if skErr != nil {
				return
			}
			b := exec.Command("go", "build", "-o", filepath.Join(skDir, c), "./cmd/"+c)
			b.Dir = "../.."
			if out, err := b.CombinedOutput(); err != nil {
				skErr = fmt.Errorf("building %s: %v\n%s", c, err, out)
			}
		}
	})
	if skErr != nil {
		t.Fatal(skErr)
	}
	return filepath.Join(skDir, name)
}

var (
	gnolandOnce sync.Once
	gnolandPath string
	gnolandErr  error
)

const gnolandPkg = "github.com/gnolang/gno/gno.land/cmd/gnoland"

func gnolandCommand(t *testing.T) string {
	t.Helper()
	gnolandOnce.Do(func() { gnolandPath, gnolandErr = buildCached(gnolandPkg) })
	if gnolandErr != nil {
		t.Fatal(gnolandErr)
	}
	return gnolandPath
}

func buildCached(pkg string) (string, error) {
	mod, err := exec.Command("go", "list", "-f", "{{.Module.Path}}@{{.Module.Version}}", pkg).Output()
	if err != nil {
		return "", fmt.Errorf("go list %s: %v", pkg, err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	name := strings.NewReplacer("/", "_", "@", "_").Replace(strings.TrimSpace(string(mod)))
	bin := filepath.Join(cache, "signerkit-interop-tools", name, filepath.Base(pkg))
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", err
	}
	partial := bin + ".part" + strconv.Itoa(os.Getpid())
	if out, err := exec.Command("go", "build", "-o", partial, pkg).CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin, os.Rename(partial, bin)
}

// syncBuf is a process's output, written by its pipes and read by the test.
type syncBuf struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

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

// tailOf is the last n bytes of s.
func tailOf(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// startSimulator starts cmd/ledgersim or cmd/yubihsmsim and returns the
// address it prints on its first line.
func startSimulator(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(skCommand(t, name), args...)
	r, w := io.Pipe()
	cmd.Stdout = w
	p := start(t, name, cmd)
	first := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(r)
		sc.Scan()
		first <- strings.TrimSpace(sc.Text())
		_, _ = io.Copy(io.Discard, r)
	}()
	t.Cleanup(func() { _ = w.Close() })
	select {
	case addr := <-first:
		if addr == "" {
			t.Fatalf("%s printed no address: %s", name, p.out)
		}
		return addr
	case <-time.After(30 * time.Second):
		t.Fatalf("%s printed no address within 30 s: %s", name, p.out)
	}
	return ""
}

func loopbackPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// scrape returns a daemon's /metrics text.
func scrape(url string) (string, error) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url + "/metrics")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}
