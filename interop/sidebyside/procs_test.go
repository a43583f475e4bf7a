package sidebyside

import (
	"bytes"
	"fmt"
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

// lineLog keeps a process's output (the last 64 KiB) and hands each
// complete line, with the time it arrived, to onLine.
type lineLog struct {
	mu     sync.Mutex
	buf    []byte // the incomplete last line
	kept   bytes.Buffer
	onLine func(time.Time, string)
}

func (l *lineLog) Write(p []byte) (int, error) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.kept.Write(p)
	if l.kept.Len() > 128<<10 {
		b := l.kept.Bytes()[l.kept.Len()-64<<10:]
		l.kept.Reset()
		l.kept.Write(b)
	}
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		if l.onLine != nil {
			l.onLine(now, string(l.buf[:i]))
		}
		l.buf = l.buf[i+1:]
	}
	return len(p), nil
}

func (l *lineLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.kept.String()
}

// proc is one process of a signer or the node, which a kill test may kill
// and start again with the same arguments.
type proc struct {
	name string
	bin  string
	args []string
	log  *lineLog

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

func newProc(t *testing.T, name, bin string, args ...string) *proc {
	p := &proc{name: name, bin: bin, args: args, log: &lineLog{}}
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("%s log (last 4000 bytes):\n%s", p.name, tail(p.log.String(), 4000))
		}
	})
	return p
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// start starts the process (again).
func (p *proc) start(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	cmd := exec.Command(p.bin, p.args...)
	cmd.Stdout, cmd.Stderr = p.log, p.log
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", p.name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	p.cmd, p.done = cmd, done
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *proc) kill() {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-done
}

// stop sends SIGTERM and waits up to 20 s, then kills.
func (p *proc) stop() {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		p.kill()
	}
}

func (p *proc) exited() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *proc) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd.Process.Pid
}

// usage is what /proc says of a set of processes at one moment.
type usage struct {
	ticks  int64 // utime + stime, in clock ticks (USER_HZ, 100 a second on Linux)
	hwmKB  int64 // VmHWM: peak resident set
	rssKB  int64 // VmRSS now
	anonKB int64 // RssAnon now: private memory, the binary's pages not counted
	pssKB  int64 // Pss now (smaps_rollup): each shared page split among its sharers
}

// readUsage sums the usage of the processes.
func readUsage(t *testing.T, procs []*proc) usage {
	t.Helper()
	var u usage
	for _, p := range procs {
		pid := p.pid()
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		// The fields after the command name, which is in parentheses and
		// may hold spaces: state is field 3, utime 14 and stime 15.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		u.ticks += ut + st
		s, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		u.hwmKB += statusKB(string(s), "VmHWM:")
		u.rssKB += statusKB(string(s), "VmRSS:")
		u.anonKB += statusKB(string(s), "RssAnon:")
		if r, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "smaps_rollup")); err == nil {
			u.pssKB += statusKB(string(r), "Pss:")
		}
	}
	return u
}

// memoryBreakdown is each process's VmHWM, RssAnon and RssFile, for the
// log.
func memoryBreakdown(procs []*proc) string {
	var b strings.Builder
	for _, p := range procs {
		s, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.pid()), "status"))
		if err != nil {
			continue
		}
		fmt.Fprintf(&b, "%s: VmHWM %d kB, RssAnon %d kB, RssFile %d kB; ", p.name,
			statusKB(string(s), "VmHWM:"), statusKB(string(s), "RssAnon:"), statusKB(string(s), "RssFile:"))
	}
	return b.String()
}

func statusKB(status, field string) int64 {
	for _, l := range strings.Split(status, "\n") {
		if strings.HasPrefix(l, field) {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(l[len(field):]), "%d", &kb)
			return kb
		}
	}
	return 0
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times: 100 on
// every Linux architecture Go runs on.
const clockTicks = 100
