package daemon

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signerkit/signerkit/guard/etcdstore/etcdtest"
	"github.com/signerkit/signerkit/privval/privvaltest"
	"github.com/signerkit/signerkit/signbytes"
)

// TestSharedStateActiveActive runs two daemons, each with its own copy of
// the key and its own state directory, on one double-sign state in a real
// 3-member etcd cluster (state = "etcd://…"). Two validator sides, each
// connected to both daemons, ask at once for prevotes and precommits on
// different blocks: exactly one message is signed per height/round/step
// across both daemons, and every signature verifies. Then, with two
// members down, a sign is refused within its sign_timeout, the metrics
// and /readyz say why, and once a member is back signing resumes by
// itself.
func TestSharedStateActiveActive(t *testing.T) {
	c := etcdtest.Start(t, 3)
	state := stateURL(c, "/signerkit/daemon-test")
	keyDir := t.TempDir()
	keyPath, pub := writeKey(t, keyDir, 21)
	var fs []*fixture
	var socks []string
	for i := range 2 {
		dir := t.TempDir()
		sock := filepath.Join(shortDir(t), "s")
		cfg := newConfig(t, dir, keyPath, ProtocolTM2Remote, "unix://"+sock)
		cfg.State = state
		cfg.Chains[0].SignTimeout = 1500 * time.Millisecond
		if i == 0 {
			if err := InitStateOf(context.Background(), cfg, chainID, 1); err != nil {
				t.Fatal(err)
			}
		}
		f := &fixture{t: t, dir: dir, pub: pub, cfg: cfg}
		if err := f.start(Options{}); err != nil {
			t.Fatal(err)
		}
		fs, socks = append(fs, f), append(socks, sock)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var clients [2][]*privvaltest.NativeClient // [side][daemon]
	for side := range 2 {
		for _, s := range socks {
			nc, err := privvaltest.DialNative(ctx, "unix", s, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { nc.Close() })
			clients[side] = append(clients[side], nc)
		}
	}
	vote := func(ph signbytes.Phase, h int64, tag byte) []byte {
		b, _ := signbytes.Message{Format: signbytes.TM2, Phase: ph, Height: h, BlockID: block(h, tag), Timestamp: baseTime, ChainID: chainID}.Bytes()
		return b
	}
	var mu sync.Mutex
	signed := map[string]byte{}
	for h := int64(1); h <= 8; h++ {
		for _, ph := range []signbytes.Phase{signbytes.Prevote, signbytes.Precommit} {
			var wg sync.WaitGroup
			for side := range 2 {
				for _, nc := range clients[side] {
					wg.Add(1)
					go func() {
						defer wg.Done()
						sb := vote(ph, h, byte(1+side))
						sig, err := nc.Sign(ctx, sb)
						if err != nil {
							return // refused: the other side's vote won
						}
						if !ed25519.Verify(pub, sb, sig) {
							t.Errorf("a signature that does not verify")
						}
						mu.Lock()
						defer mu.Unlock()
						k := fmt.Sprintf("%d/%d", h, ph.Step())
						if old, ok := signed[k]; ok && old != byte(side) {
							t.Errorf("CONFLICT: both blocks signed at %s", k)
						}
						signed[k] = byte(side)
					}()
				}
			}
			wg.Wait()
		}
	}
	if len(signed) != 16 {
		t.Errorf("%d steps signed, want 16", len(signed))
	}
	if code, body := fs[0].get("/readyz"); code != 200 {
		t.Fatalf("/readyz with etcd up: %d %s", code, body)
	}
	states, _, err := ShowState(ctx, fs[1].cfg)
	if err != nil || len(states) != 1 || states[0].Height != 8 || states[0].Step != 3 || !ed25519.Verify(pub, states[0].SignBytes, states[0].Signature) {
		t.Fatalf("state show on the shared state: %+v, %v", states, err)
	}
	if _, err := RepairStateOf(ctx, fs[1].cfg, chainID, 100); err == nil {
		t.Error("state repair on a shared state succeeded")
	}

	c.Kill(1)
	c.Kill(2)
	start := time.Now()
	if _, err := clients[0][0].Sign(ctx, vote(signbytes.Prevote, 9, 1)); err == nil {
		t.Fatal("signed without an etcd quorum")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the refusal took %v (sign_timeout 1.5 s)", d)
	}
	m := fs[0].scrape()
	if up, errs := metric(m, "signerkit_shared_state_up"), metric(m, "signerkit_shared_state_errors_total", "op", "swap")+
		metric(m, "signerkit_shared_state_errors_total", "op", "load"); up != 0 || errs < 1 {
		t.Errorf("without quorum: shared_state_up %v, shared_state_errors_total %v", up, errs)
	}
	if code, body := fs[0].get("/readyz"); code == 200 || !strings.Contains(body, "shared double-sign state") {
		t.Errorf("/readyz without quorum: %d %s", code, body)
	}
	c.Restart(1)
	c.WaitLeader(30 * time.Second)
	waitFor(t, "signing to resume", func() bool {
		sb := vote(signbytes.Prevote, 9, 1)
		sig, err := clients[0][0].Sign(ctx, sb)
		return err == nil && ed25519.Verify(pub, sb, sig)
	})
	if code, body := fs[0].get("/readyz"); code != 200 {
		t.Errorf("/readyz after the quorum came back: %d %s", code, body)
	}
}
