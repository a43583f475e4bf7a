//go:build linux

package daemon

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/signerkit/signerkit/internal/proctest"
)

// floodExecEnv, set in the environment of this test binary, makes it
// exec the program it names, with the same arguments, under an open-file
// limit of floodNofile (soft and hard): how TestConnectionFlood runs the
// daemon at that limit without a prlimit command.
const floodExecEnv = "SIGNERKIT_TEST_EXEC_NOFILE"

const floodNofile = 256

func init() {
	bin := os.Getenv(floodExecEnv)
	if bin == "" {
		return
	}
	os.Unsetenv(floodExecEnv)
	lim := syscall.Rlimit{Cur: floodNofile, Max: floodNofile}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		fmt.Fprintln(os.Stderr, "setrlimit:", err)
		os.Exit(2)
	}
	err := syscall.Exec(bin, append([]string{bin}, os.Args[1:]...), os.Environ())
	fmt.Fprintln(os.Stderr, "exec:", err)
	os.Exit(2)
}

// TestConnectionFlood: 10,000 connections, half silent and half sending
// garbage, some from the validator's own address, are held open against
// the signerkit command running with 256 file descriptors. The daemon
// used to exit 1 when accept failed with "too many open files". Now it
// stays up, sheds what it cannot hold, and the allowlisted validator,
// connecting from the flooded address, completes its handshake and signs
// within 1 s with all 10,000 held (and gets through while they are being
// dialled).
func TestConnectionFlood(t *testing.T) {
	if testing.Short() {
		t.Skip("floods a daemon process with 10,000 connections")
	}
	const flood = 10000
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur < lim.Max {
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			t.Fatal(err)
		}
	}
	if lim.Cur < flood+1000 {
		t.Skipf("the open-file limit of this process is %d (hard %d): the flood needs %d", lim.Cur, lim.Max, flood+1000)
	}
	bin := proctest.BuildPackage(t, "github.com/signerkit/signerkit/cmd/signerkit", "signerkit")

	dir := t.TempDir()
	keyPath, pub := writeKey(t, dir, 3)
	idPath, id := writeKey(t, dir, 4)
	node := ed25519.NewKeyFromSeed(bytesOf(9, ed25519.SeedSize))
	stateDir := filepath.Join(dir, "state")
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := InitState(context.Background(), stateDir, chainID, 1); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "signerkit.toml")
	cfgText := fmt.Sprintf(`state_dir = %q
identity_key = %q
metrics_addr = "127.0.0.1:0"

[[chain]]
id = %q
protocol = "tm2-remote"
key = "inprocess:file=%s"

  [[chain.validator]]
  addr = "tcp://127.0.0.1:0"
  allow = ["%x"]
`, stateDir, idPath, chainID, keyPath, []byte(node.Public().(ed25519.PublicKey)))
	if err := os.WriteFile(cfgPath, []byte(cfgText), 0o600); err != nil {
		t.Fatal(err)
	}

	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var out logSink
	cmd := exec.Command(self, "start", "-config", cfgPath)
	cmd.Env = append(os.Environ(), floodExecEnv+"="+bin)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	defer func() {
		if !stopped {
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			log := out.String()
			if len(log) > 8000 {
				log = log[:4000] + "\n…\n" + log[len(log)-4000:]
			}
			t.Logf("signerkit log:\n%s", log)
		}
	}()
	listenRE := regexp.MustCompile(`listening for the validator.* listen=(\S+)`)
	metricsRE := regexp.MustCompile(`url=http://(\S+)/metrics`)
	var addr, metricsAddr string
	deadline := time.Now().Add(60 * time.Second)
	for addr == "" || metricsAddr == "" {
		if time.Now().After(deadline) {
			t.Fatal("signerkit did not start listening")
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("signerkit exited: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
		if m := listenRE.FindStringSubmatch(out.String()); m != nil {
			addr = m[1]
		}
		if m := metricsRE.FindStringSubmatch(out.String()); m != nil {
			metricsAddr = m[1]
		}
	}
	limits, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(fmt.Sprintf(`Max open files\s+%d\s+%d`, floodNofile, floodNofile)).Match(limits) {
		t.Fatalf("signerkit's open-file limit is not %d:\n%s", floodNofile, limits)
	}
	f := &tcpFixture{fixture: &fixture{t: t, pub: pub}, addr: addr, node: node, id: id}
	alive := func() {
		t.Helper()
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("signerkit exited under the flood: %v", err)
		default:
		}
	}
	// sign checks the validator's connect, handshake and sign within
	// bound: the 1 s with the flood held. While the flood is
	// still being dialled at full speed the kernel's accept queue may
	// overflow and drop the validator's SYN (retransmitted after 1 s) —
	// nothing the daemon decides — so there it must only get through.
	sign := func(h int64, when string, bound time.Duration) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		took, err := f.signAs(ctx, "127.0.0.1", node, h)
		if err != nil {
			alive()
			t.Fatalf("the validator %s: %v", when, err)
		}
		t.Logf("the validator connected and signed %s in %v", when, took)
		if took > bound {
			t.Errorf("the validator took %v to connect and sign %s", took, when)
		}
	}
	sign(1, "before the flood", time.Second)

	// The flood: 10,000 connections, every tenth from the validator's
	// address, the others from 127.1.x.y; even ones silent, odd ones
	// sending garbage. All are held until the end.
	var (
		mu      sync.Mutex
		held    []net.Conn
		dialed  atomic.Int64
		failed  atomic.Int64
		halfway = make(chan struct{})
		wg      sync.WaitGroup
		next    atomic.Int64
	)
	defer func() {
		mu.Lock()
		for _, c := range held {
			_ = c.Close()
		}
		mu.Unlock()
	}()
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(next.Load()), 1))
			garbage := make([]byte, 512)
			for {
				i := next.Add(1) - 1
				if i >= flood {
					return
				}
				src := "127.0.0.1"
				if i%10 != 0 {
					src = fmt.Sprintf("127.1.%d.%d", i/200, i%200+1)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				c, err := dialFrom(ctx, src, addr)
				cancel()
				if err != nil {
					failed.Add(1)
				} else {
					if i%2 == 1 {
						for j := range garbage {
							garbage[j] = byte(rng.Uint32())
						}
						_ = c.SetWriteDeadline(time.Now().Add(time.Second))
						_, _ = c.Write(garbage[:1+rng.IntN(len(garbage))])
					}
					mu.Lock()
					held = append(held, c)
					mu.Unlock()
				}
				if dialed.Add(1) == flood/2 {
					close(halfway)
				}
			}
		}()
	}
	<-halfway
	alive()
	sign(2, "in the middle of the flood", 5*time.Second)
	wg.Wait()
	alive()
	mu.Lock()
	n := len(held)
	mu.Unlock()
	t.Logf("%d connections held (%d dials failed)", n, failed.Load())
	if n < flood*9/10 {
		t.Fatalf("only %d of %d connections made", n, flood)
	}
	sign(3, fmt.Sprintf("with %d connections held", n), time.Second)
	// Shed and failed connections are counted; the daemon never ran out.
	resp, err := http.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, line := range strings.Split(string(text), "\n") {
		if strings.HasPrefix(line, "signerkit_pending_handshakes") || strings.HasPrefix(line, "signerkit_accept_errors_total") ||
			strings.HasPrefix(line, "signerkit_handshakes_throttled_total") {
			t.Log(line)
		}
	}
	if shed := metric(string(text), "signerkit_pending_handshakes_shed_total", "cap", "total") + metric(string(text), "signerkit_pending_handshakes_shed_total", "cap", "host"); shed < flood/2 {
		t.Errorf("%v connections shed under the caps", shed)
	}
	alive()

	// A graceful stop with everything still held: exit status 0.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		stopped = true
		if err != nil {
			t.Fatalf("signerkit stopped with %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("signerkit did not stop 30 s after SIGTERM")
	}
}
