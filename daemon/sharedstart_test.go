package daemon

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/signerkit/signerkit/guard/etcdstore/etcdtest"
	"github.com/signerkit/signerkit/privval/privvaltest"
	"github.com/signerkit/signerkit/signbytes"
)

// stateURL is the state setting of c's members under prefix, with TLS.
func stateURL(c *etcdtest.Cluster, prefix string) string {
	var hosts []string
	for _, m := range c.Members {
		hosts = append(hosts, m.ClientAddr)
	}
	return fmt.Sprintf("etcd://%s%s?ca=%s&cert=%s&key=%s", strings.Join(hosts, ","), prefix, c.PKI.CA, c.PKI.ClientCert, c.PKI.ClientKey)
}

// TestSharedStateStartWithoutQuorum starts two daemons on a shared state
// whose etcd cluster has lost its quorum: the validator's (a), and one
// with another key (b) pointed at the same prefix. Both start within
// their sign_timeout, serve /healthz, say not ready on /readyz, and refuse
// signs within the sign_timeout. Once a member is back, a signs by itself
// (its start check, deferred, passed: its key is bound in state_dir);
// b, whose key did not make the state's last signature, still refuses
// every sign and stays not ready.
func TestSharedStateStartWithoutQuorum(t *testing.T) {
	c := etcdtest.Start(t, 3)
	state := stateURL(c, "/signerkit/start-test")
	keyDir := t.TempDir()
	keyA, pubA := writeKey(t, keyDir, 31)
	keyB, _ := writeKey(t, t.TempDir(), 32)
	const signTimeout = 1500 * time.Millisecond
	newDaemon := func(key string) *fixture {
		dir := t.TempDir()
		sock := filepath.Join(shortDir(t), "s")
		cfg := newConfig(t, dir, key, ProtocolTM2Remote, "unix://"+sock)
		cfg.State = state
		cfg.Chains[0].SignTimeout = signTimeout
		return &fixture{t: t, dir: dir, pub: pubA, cfg: cfg}
	}
	a, b := newDaemon(keyA), newDaemon(keyB)
	if err := InitStateOf(context.Background(), a.cfg, chainID, 1); err != nil {
		t.Fatal(err)
	}
	c.Kill(1)
	c.Kill(2)

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	vote := func(h int64) []byte {
		bs, _ := signbytes.Message{Format: signbytes.TM2, Phase: signbytes.Prevote, Height: h, BlockID: block(h, 1), Timestamp: baseTime, ChainID: chainID}.Bytes()
		return bs
	}
	dial := func(f *fixture) *privvaltest.NativeClient {
		addr := strings.TrimPrefix(f.cfg.Chains[0].Validators[0].Addr, "unix://")
		nc, err := privvaltest.DialNative(ctx, "unix", addr, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		return nc
	}
	var clients []*privvaltest.NativeClient
	for _, f := range []*fixture{a, b} {
		start := time.Now()
		if err := f.start(Options{}); err != nil {
			t.Fatalf("start without an etcd quorum: %v", err)
		}
		if d := time.Since(start); d > signTimeout+3*time.Second {
			t.Errorf("start took %v (sign_timeout %v)", d, signTimeout)
		}
		nc := dial(f)
		clients = append(clients, nc)
		if code, body := f.get("/healthz"); code != 200 {
			t.Errorf("/healthz without quorum: %d %s", code, body)
		}
		if code, body := f.get("/readyz"); code == 200 || !strings.Contains(body, "shared double-sign state") {
			t.Errorf("/readyz without quorum: %d %s", code, body)
		}
		start = time.Now()
		if _, err := nc.Sign(ctx, vote(2)); err == nil {
			t.Fatal("signed without an etcd quorum")
		} else if !strings.Contains(err.Error(), "shared state") {
			t.Errorf("the refusal does not name the shared state: %v", err)
		}
		if d := time.Since(start); d > signTimeout+3*time.Second {
			t.Errorf("the refusal took %v (sign_timeout %v)", d, signTimeout)
		}
		if up := metric(f.scrape(), "signerkit_shared_state_up"); up != 0 {
			t.Errorf("shared_state_up %v without quorum", up)
		}
	}

	c.Restart(1)
	c.WaitLeader(30 * time.Second)
	waitFor(t, "a to sign once etcd has a quorum", func() bool {
		sb := vote(2)
		sig, err := clients[0].Sign(ctx, sb)
		return err == nil && ed25519.Verify(pubA, sb, sig)
	})
	if code, body := a.get("/readyz"); code != 200 {
		t.Errorf("a's /readyz with the quorum back: %d %s", code, body)
	}
	kb, err := os.ReadFile(filepath.Join(a.cfg.StateDir, KeysFile))
	if err != nil || !strings.Contains(string(kb), hex.EncodeToString(pubA)) {
		t.Errorf("a's key is not bound in its state_dir after the deferred check: %q, %v", kb, err)
	}

	// b's key did not make the last signature: its deferred check fails.
	for range 3 {
		if _, err := clients[1].Sign(ctx, vote(3)); err == nil {
			t.Fatal("b, with another key, signed on the validator's shared state")
		} else if !strings.Contains(err.Error(), "did not make the last signature") {
			t.Errorf("b's refusal: %v", err)
		}
	}
	if code, body := b.get("/readyz"); code == 200 || !strings.Contains(body, "not checked") {
		t.Errorf("b's /readyz: %d %s", code, body)
	}
	if _, err := os.Stat(filepath.Join(b.cfg.StateDir, KeysFile)); err == nil {
		t.Error("b bound its key to the chain")
	}
}
