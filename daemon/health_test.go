package daemon

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signerkit/signerkit/privval"
	"github.com/signerkit/signerkit/privval/privvaltest"
	"github.com/signerkit/signerkit/signer"
)

// probedKey is a key on a pretend device whose health the test sets:
// nil, an error, or a hang (until its context ends).
type probedKey struct {
	priv    ed25519.PrivateKey
	health  *atomic.Pointer[error] // nil: healthy
	hang    *atomic.Bool
	probes  *atomic.Int32
	signing chan struct{} // when set, a sign waits on it
	// probeErr, when set, fails Health alone (a device that opens but
	// does not pass its health check).
	probeErr atomic.Pointer[error]
}

func (k *probedKey) Public() crypto.PublicKey { return k.priv.Public() }
func (k *probedKey) Close() error             { return nil }
func (k *probedKey) Sign(_ io.Reader, msg []byte, _ crypto.SignerOpts) ([]byte, error) {
	return k.SignContext(context.Background(), msg)
}
func (k *probedKey) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	if k.signing != nil {
		<-k.signing
	}
	if e := k.health.Load(); e != nil {
		return nil, *e
	}
	return ed25519.Sign(k.priv, msg), nil
}
func (k *probedKey) Health(ctx context.Context) error {
	k.probes.Add(1)
	if k.hang.Load() {
		<-ctx.Done()
		return fmt.Errorf("pretend: %w", ctx.Err())
	}
	if e := k.health.Load(); e != nil {
		return *e
	}
	if e := k.probeErr.Load(); e != nil {
		return *e
	}
	return nil
}

type probeFixture struct {
	*fixture
	health atomic.Pointer[error]
	hang   atomic.Bool
	probes atomic.Int32
	opens  atomic.Int32
	key    *probedKey
}

func newProbeFixture(t *testing.T, interval, signTimeout time.Duration, signing chan struct{}) *probeFixture {
	t.Helper()
	ln, err := privvaltest.NewListener("unix", privval.GnoTMKMS)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	priv := ed25519.NewKeyFromSeed(bytesOf(5, 32))
	p := &probeFixture{}
	p.key = &probedKey{priv: priv, health: &p.health, hang: &p.hang, probes: &p.probes, signing: signing}
	open := func(ctx context.Context, uri string) (signer.Signer, error) {
		p.opens.Add(1)
		if e := p.health.Load(); e != nil {
			return nil, *e
		}
		return p.key, nil
	}
	dir := t.TempDir()
	p.fixture = &fixture{t: t, ln: ln, dial: privval.GnoTMKMS, pub: priv.Public().(ed25519.PublicKey),
		cfg: newConfig(t, dir, "unused", ProtocolTM2TMKMS, "unix://"+ln.Address())}
	p.cfg.Chains[0].Key = "probed:"
	p.cfg.Chains[0].SignTimeout = signTimeout
	if err := InitState(context.Background(), p.cfg.StateDir, chainID, 1); err != nil {
		t.Fatal(err)
	}
	if err := p.start(Options{Open: open, HealthInterval: interval, reopenBackoff: testReopenBackoff}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if p.c, err = ln.Accept(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.c.Close() })
	waitFor(t, "the validator connected", func() bool { return metric(p.scrape(), "signerkit_validator_connected") == 1 })
	return p
}

func (p *probeFixture) set(err error) {
	if err == nil {
		p.health.Store(nil)
	} else {
		p.health.Store(&err)
	}
}

// TestReadyzProbes: /readyz asks the device for its health once its last
// answer is older than the interval, shares one probe among scrapers
// within it, and reports a failed probe with its typed cause; a probe
// that finds the device gone takes the backend down, and the reopen loop
// declares it back only once its health check passes.
func TestReadyzProbes(t *testing.T) {
	t.Parallel()
	const interval = 200 * time.Millisecond
	// atMost is the most probes scrapes since start may have made: one
	// per interval (however slow the machine, never one per scrape).
	atMost := func(start time.Time) int32 { return int32(time.Since(start) / interval) }
	opened := time.Now()
	p := newProbeFixture(t, interval, 300*time.Millisecond, nil)

	// Within the interval of the open, no probe; then at most one per
	// interval, however many scrapes.
	for range 20 {
		if code, body := p.get("/readyz"); code != 200 {
			t.Fatalf("/readyz %d %q", code, body)
		}
	}
	if n, most := p.probes.Load(), atMost(opened); n > most {
		t.Fatalf("%d probes for 20 scrapes, want at most %d (one per %v since the open)", n, most, interval)
	}
	time.Sleep(interval)
	probed := time.Now()
	before := p.probes.Load()
	if code, body := p.get("/readyz"); code != 200 || p.probes.Load() != before+1 {
		t.Fatalf("/readyz %d %q made %d probes with the last answer stale, want 1", code, body, p.probes.Load()-before)
	}
	for range 20 {
		if code, body := p.get("/readyz"); code != 200 {
			t.Fatalf("/readyz %d %q", code, body)
		}
	}
	if n, most := p.probes.Load()-before, 1+atMost(probed); n > most {
		t.Fatalf("%d probes for 21 scrapes, want at most %d", n, most)
	}
	if v := metric(p.scrape(), "signerkit_backend_health_checks_total", "backend", "probed", "result", "ok"); v != float64(p.probes.Load()) {
		t.Errorf("health_checks_total{ok} = %v, want %d", v, p.probes.Load())
	}
	// A sign within the interval stands for the device's health.
	time.Sleep(interval)
	p.signHeight(1)
	signed := time.Now()
	before = p.probes.Load()
	if code, _ := p.get("/readyz"); code != 200 || p.probes.Load()-before > atMost(signed) {
		t.Errorf("/readyz %d just after a sign made %d probes, want none", code, p.probes.Load()-before)
	}

	// A hung device: not ready, cause timeout, within the probe timeout
	// (the chain's sign_timeout); the backend stays open.
	time.Sleep(interval)
	p.hang.Store(true)
	code, body := p.get("/readyz")
	if code != 503 || !strings.Contains(body, "backend probed not answering: timeout") {
		t.Errorf("/readyz %d %q with the device hung", code, body)
	}
	if v := metric(p.scrape(), "signerkit_backend_up", "backend", "probed"); v != 1 {
		t.Errorf("backend_up = %v after a timeout, want 1 (a hung device is not reopened)", v)
	}
	p.hang.Store(false)
	time.Sleep(interval)
	if code, body := p.get("/readyz"); code != 200 {
		t.Errorf("/readyz %d %q once the device answers again", code, body)
	}

	// The device goes away between signs: the probe finds it, the backend
	// goes down with its cause and is reopened with backoff.
	time.Sleep(interval)
	p.set(fmt.Errorf("pretend: unplugged: %w", signer.ErrDisconnected))
	code, body = p.get("/readyz")
	if code != 503 || !strings.Contains(body, "disconnected") {
		t.Errorf("/readyz %d %q with the device gone", code, body)
	}
	m := p.scrape()
	if v := metric(m, "signerkit_backend_up", "backend", "probed"); v != 0 {
		t.Errorf("backend_up = %v, want 0", v)
	}
	if v := metric(m, "signerkit_backend_health_checks_total", "result", "disconnected"); v != 1 {
		t.Errorf("health_checks_total{disconnected} = %v", v)
	}
	if code, body := p.get("/readyz"); code != 503 || !strings.Contains(body, "backend probed down: disconnected") {
		t.Errorf("/readyz %d %q while reopening", code, body)
	}
	// It opens again but fails its health check: still down.
	opens := p.opens.Load()
	waitFor(t, "a failed reopen", func() bool { return p.opens.Load() >= opens+2 })
	failing := fmt.Errorf("pretend: app closed: %w", signer.ErrAppNotOpen)
	p.key.probeErr.Store(&failing)
	p.set(nil)
	waitFor(t, "a reopen refused by its health check", func() bool {
		return metric(p.scrape(), "signerkit_backend_reopens_total", "result", "unhealthy") >= 1
	})
	if v := metric(p.scrape(), "signerkit_backend_up"); v != 0 {
		t.Fatalf("backend_up = %v with the health check failing", v)
	}
	p.key.probeErr.Store(nil)
	waitFor(t, "backend_up 1", func() bool { return metric(p.scrape(), "signerkit_backend_up") == 1 })
	if code, body := p.get("/readyz"); code != 200 {
		t.Errorf("/readyz %d %q after recovery", code, body)
	}
	p.signHeight(2)
}

// TestNoProbeDuringSign: while a sign is on the device, /readyz does not
// probe it (the sign will say), however stale the last answer.
func TestNoProbeDuringSign(t *testing.T) {
	t.Parallel()
	const interval = 50 * time.Millisecond
	signing := make(chan struct{})
	p := newProbeFixture(t, interval, 10*time.Second, signing)
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = p.c.SignVote(ctx, chainID, &privvaltest.Vote{Phase: 2, Height: 1, BlockID: block(1, 1), Timestamp: baseTime})
	}()
	waitFor(t, "the sign on the device", func() bool {
		return p.d.keys["probed:"].health.inflight.Load() == 1
	})
	time.Sleep(2 * interval)
	for range 3 {
		if code, body := p.get("/readyz"); code != 200 {
			t.Errorf("/readyz %d %q during a sign", code, body)
		}
	}
	if n := p.probes.Load(); n != 0 {
		t.Errorf("%d probes during a sign, want 0", n)
	}
	close(signing)
	<-done
}
