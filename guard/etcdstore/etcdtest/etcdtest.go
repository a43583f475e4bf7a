// Package etcdtest runs a real etcd cluster on loopback for tests: the
// etcd binary (Debian's etcd-server, or $SIGNERKIT_ETCD) started as
// member processes with TLS on their client URLs and client certificates
// required, members killed and restarted, leadership moved, and TCP
// proxies between a client and the members that pass, drop or delay.
//
// Without an etcd binary, Start skips the test, unless
// SIGNERKIT_REQUIRE_ETCD=1, when it fails it (CI sets it).
package etcdtest

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Binary returns the etcd binary's path, or skips (or, with
// SIGNERKIT_REQUIRE_ETCD=1, fails) t.
func Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("SIGNERKIT_ETCD"); p != "" {
		return p
	}
	if p, err := exec.LookPath("etcd"); err == nil {
		return p
	}
	if os.Getenv("SIGNERKIT_REQUIRE_ETCD") == "1" {
		t.Fatal("no etcd binary on PATH and SIGNERKIT_REQUIRE_ETCD=1: install Debian's etcd-server (make deps) or set SIGNERKIT_ETCD")
	}
	t.Skip("no etcd binary on PATH (install Debian's etcd-server, or set SIGNERKIT_ETCD); SIGNERKIT_REQUIRE_ETCD=1 makes this a failure")
	return ""
}

// Cluster is a running etcd cluster of member processes.
type Cluster struct {
	t       testing.TB
	bin     string
	dir     string
	PKI     *PKI
	Members []*Member
	client  *http.Client
}

// Member is one etcd process.
type Member struct {
	Name       string
	ClientAddr string // host:port
	PeerAddr   string
	dataDir    string
	args       []string
	mu         sync.Mutex
	cmd        *exec.Cmd
	done       chan struct{}
}

// Start starts an n-member cluster and waits until it has a leader. It
// is stopped when t ends.
func Start(t testing.TB, n int) *Cluster {
	t.Helper()
	bin := Binary(t)
	dir := t.TempDir()
	c := &Cluster{t: t, bin: bin, dir: dir, PKI: NewPKI(t, dir)}
	c.client = &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: c.PKI.ClientTLS()}}
	var initial []string
	for i := range n {
		m := &Member{Name: fmt.Sprintf("m%d", i), ClientAddr: freeAddr(t), PeerAddr: freeAddr(t), dataDir: filepath.Join(dir, fmt.Sprintf("m%d.etcd", i))}
		c.Members = append(c.Members, m)
		initial = append(initial, m.Name+"=http://"+m.PeerAddr)
	}
	for _, m := range c.Members {
		m.args = []string{
			"--name", m.Name, "--data-dir", m.dataDir,
			"--listen-client-urls", "https://" + m.ClientAddr, "--advertise-client-urls", "https://" + m.ClientAddr,
			"--listen-peer-urls", "http://" + m.PeerAddr, "--initial-advertise-peer-urls", "http://" + m.PeerAddr,
			"--initial-cluster", strings.Join(initial, ","), "--initial-cluster-state", "new",
			"--initial-cluster-token", "signerkit-test",
			"--cert-file", c.PKI.ServerCert, "--key-file", c.PKI.ServerKey,
			"--trusted-ca-file", c.PKI.CA, "--client-cert-auth",
			"--heartbeat-interval", "50", "--election-timeout", "500",
			"--logger", "zap", "--log-outputs", filepath.Join(dir, m.Name+".log"),
		}
		c.start(m)
	}
	t.Cleanup(c.Stop)
	c.WaitLeader(30 * time.Second)
	return c
}

func (c *Cluster) start(m *Member) {
	c.t.Helper()
	cmd := exec.Command(c.bin, m.args...)
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		c.t.Fatalf("etcd %s: %v", m.Name, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	m.mu.Lock()
	m.cmd, m.done = cmd, done
	m.mu.Unlock()
}

// Endpoints returns the members' client URLs.
func (c *Cluster) Endpoints() []string {
	var eps []string
	for _, m := range c.Members {
		eps = append(eps, "https://"+m.ClientAddr)
	}
	return eps
}

// Kill SIGKILLs member i and waits for it to exit.
func (c *Cluster) Kill(i int) {
	m := c.Members[i]
	m.mu.Lock()
	cmd, done := m.cmd, m.done
	m.cmd = nil
	m.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Kill()
	<-done
}

// Running reports whether member i runs.
func (c *Cluster) Running(i int) bool {
	m := c.Members[i]
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cmd != nil
}

// Restart starts member i again on its data directory (it must be
// killed).
func (c *Cluster) Restart(i int) {
	if c.Running(i) {
		return
	}
	c.start(c.Members[i])
}

// Stop kills every member.
func (c *Cluster) Stop() {
	for i := range c.Members {
		c.Kill(i)
	}
}

// status is a member's /v3/maintenance/status answer.
type status struct {
	Header struct {
		MemberID string `json:"member_id"`
	} `json:"header"`
	Leader string `json:"leader"`
}

func (c *Cluster) post(ctx context.Context, addr, path string, req, resp any) error {
	b, _ := json.Marshal(req)
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+addr+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	res, err := c.client.Do(hr)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", path, res.Status)
	}
	return json.NewDecoder(res.Body).Decode(resp)
}

// Leader returns the index of the member that leads, as a running member
// reports it, or -1.
func (c *Cluster) Leader() int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	ids := map[string]int{}
	leader := ""
	for i, m := range c.Members {
		if !c.Running(i) {
			continue
		}
		var st status
		if err := c.post(ctx, m.ClientAddr, "/v3/maintenance/status", struct{}{}, &st); err != nil {
			continue
		}
		ids[st.Header.MemberID] = i
		if st.Leader != "" && st.Leader != "0" {
			leader = st.Leader
		}
	}
	if i, ok := ids[leader]; ok {
		return i
	}
	return -1
}

// WaitLeader waits up to d for a leader among the running members.
func (c *Cluster) WaitLeader(d time.Duration) int {
	c.t.Helper()
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		if l := c.Leader(); l >= 0 {
			return l
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Fatalf("etcd: no leader within %v (logs in %s)", d, c.dir)
	return -1
}

// MoveLeader asks the leader to hand leadership to member to; it
// returns the error etcd gives (none running, a member down).
func (c *Cluster) MoveLeader(to int) error {
	l := c.Leader()
	if l < 0 || l == to || !c.Running(to) {
		return fmt.Errorf("no leader to move (leader %d, target %d)", l, to)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var st status
	if err := c.post(ctx, c.Members[to].ClientAddr, "/v3/maintenance/status", struct{}{}, &st); err != nil {
		return err
	}
	var out struct{}
	return c.post(ctx, c.Members[l].ClientAddr, "/v3/maintenance/transfer-leadership", map[string]string{"targetID": st.Header.MemberID}, &out)
}

// freeAddr returns a loopback address with a port free just now.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// ClientTLS returns a client TLS configuration with the client
// certificate.
func (p *PKI) ClientTLS() *tls.Config {
	cfg, err := p.clientTLS()
	if err != nil {
		panic(err)
	}
	return cfg
}
