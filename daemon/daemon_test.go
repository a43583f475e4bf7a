package daemon

import (
	"bufio"
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/privval"
	"github.com/signerkit/signerkit/privval/privvaltest"
	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

const chainID = "test-chain"

// writeKey writes a PEM key file of seed's Ed25519 key and returns its
// path and public key.
func writeKey(t testing.TB, dir string, seed byte) (string, ed25519.PublicKey) {
	t.Helper()
	priv := ed25519.NewKeyFromSeed(bytesOf(seed, ed25519.SeedSize))
	p := filepath.Join(dir, fmt.Sprintf("key%d.pem", seed))
	if err := inprocess.WriteKeyFile(p, priv); err != nil {
		t.Fatal(err)
	}
	return p, priv.Public().(ed25519.PublicKey)
}

func bytesOf(b byte, n int) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = b
	}
	return out
}

// fixture is a daemon signing for one validator played by privvaltest.
type fixture struct {
	t     *testing.T
	dir   string
	cfg   *Config
	d     *Daemon
	ln    *privvaltest.Listener
	c     *privvaltest.Client
	pub   ed25519.PublicKey
	stop  context.CancelFunc
	done  chan error
	dial  privval.Dialect
	httpS *httptest.Server
}

func newConfig(t *testing.T, dir, keyPath, protocol, addr string) *Config {
	t.Helper()
	stateDir := filepath.Join(dir, "state")
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		t.Fatal(err)
	}
	return &Config{StateDir: stateDir, ShutdownGrace: 10 * time.Second, Chains: []ChainConfig{{
		ID: chainID, Protocol: protocol, Key: "inprocess:file=" + keyPath,
		Validators: []ValidatorConfig{{Addr: addr}},
	}}}
}

// start makes and runs a daemon on cfg; it returns New's error.
func (f *fixture) start(opts Options) error {
	f.t.Helper()
	d, err := New(context.Background(), f.cfg, opts)
	if err != nil {
		return err
	}
	f.d = d
	ctx, cancel := context.WithCancel(context.Background())
	f.stop, f.done = cancel, make(chan error, 1)
	go func() { f.done <- d.Run(ctx) }()
	f.httpS = httptest.NewServer(d.Handler())
	f.t.Cleanup(func() { f.shutdown() })
	return nil
}

func (f *fixture) shutdown() {
	if f.stop == nil {
		return
	}
	f.stop()
	if err := <-f.done; err != nil {
		f.t.Errorf("Run: %v", err)
	}
	f.stop = nil
	f.httpS.Close()
}

func newFixture(t *testing.T, protocol string, d privval.Dialect) *fixture {
	t.Helper()
	dir := t.TempDir()
	keyPath, pub := writeKey(t, dir, 7)
	ln, err := privvaltest.NewListener("unix", d)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	f := &fixture{t: t, dir: dir, ln: ln, pub: pub, dial: d, cfg: newConfig(t, dir, keyPath, protocol, "unix://"+ln.Address())}
	if err := InitState(context.Background(), f.cfg.StateDir, chainID, 1); err != nil {
		t.Fatal(err)
	}
	if err := f.start(Options{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if f.c, err = ln.Accept(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.c.Close() })
	return f
}

func block(h int64, tag byte) signbytes.BlockID {
	var hb [8]byte
	binary.BigEndian.PutUint64(hb[:], uint64(h))
	sum := sha256.Sum256(append(hb[:], tag))
	return signbytes.BlockID{Hash: sum[:], PartSetHeader: signbytes.PartSetHeader{Total: 1, Hash: bytesOf(tag, 32)}}
}

var baseTime = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// signHeight asks for a proposal, prevote and precommit at h and verifies
// each signature with crypto/ed25519 over sign bytes built by signbytes.
func (f *fixture) signHeight(h int64) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	format := signbytes.CometBFT
	if f.dial == privval.GnoTMKMS {
		format = signbytes.TM2
	}
	b, ts := block(h, 1), baseTime.Add(time.Duration(h)*time.Second)
	verify := func(m signbytes.Message, sig []byte) {
		f.t.Helper()
		m.Format, m.ChainID, m.BlockID, m.Height = format, chainID, b, h
		sb, err := m.Bytes()
		if err != nil {
			f.t.Fatal(err)
		}
		if !ed25519.Verify(f.pub, sb, sig) {
			f.t.Fatalf("height %d %s: signature does not verify", h, m.Phase)
		}
	}
	p, err := f.c.SignProposal(ctx, chainID, &privvaltest.Proposal{Height: h, POLRound: -1, BlockID: b, Timestamp: ts})
	if err != nil {
		f.t.Fatalf("height %d proposal: %v", h, err)
	}
	verify(signbytes.Message{Phase: signbytes.Proposal, POLRound: -1, Timestamp: p.Timestamp}, p.Signature)
	for _, ph := range []signbytes.Phase{signbytes.Prevote, signbytes.Precommit} {
		v, err := f.c.SignVote(ctx, chainID, &privvaltest.Vote{Phase: ph, Height: h, BlockID: b, Timestamp: ts,
			ValidatorAddress: make([]byte, 20), Extension: extFor(f.dial, ph)})
		if err != nil {
			f.t.Fatalf("height %d %s: %v", h, ph, err)
		}
		verify(signbytes.Message{Phase: ph, Timestamp: v.Timestamp}, v.Signature)
		if f.dial == privval.V038 && ph == signbytes.Precommit {
			em := signbytes.Message{Format: signbytes.CometBFT, Phase: signbytes.VoteExtension, Height: h, ChainID: chainID, Extension: v.Extension}
			sb, _ := em.Bytes()
			if !ed25519.Verify(f.pub, sb, v.ExtensionSignature) {
				f.t.Fatalf("height %d: extension signature does not verify", h)
			}
		}
	}
}

func extFor(d privval.Dialect, ph signbytes.Phase) []byte {
	if d == privval.V038 && ph == signbytes.Precommit {
		return []byte("ext")
	}
	return nil
}

// scrape returns the /metrics text.
func (f *fixture) scrape() string {
	f.t.Helper()
	resp, err := http.Get(f.httpS.URL + "/metrics")
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	return string(b)
}

// metric returns the value of the sample name{labels…} in text, or -1.
func metric(text, name string, labels ...string) float64 {
	s := bufio.NewScanner(strings.NewReader(text))
	for s.Scan() {
		l := s.Text()
		if !strings.HasPrefix(l, name+"{") && !strings.HasPrefix(l, name+" ") {
			continue
		}
		ok := true
		for i := 0; i+1 < len(labels); i += 2 {
			if !strings.Contains(l, labels[i]+`="`+labels[i+1]+`"`) {
				ok = false
			}
		}
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
		if err != nil {
			return -1
		}
		return v
	}
	return -1
}

func (f *fixture) get(path string) (int, string) {
	f.t.Helper()
	resp, err := http.Get(f.httpS.URL + path)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestMetricsAfterSigning: after N heights through a validator and one
// double sign, /metrics counts each phase, the refusal, the last height
// and the backend's stages, labelled measured.
func TestMetricsAfterSigning(t *testing.T) {
	f := newFixture(t, ProtocolCometBFT038, privval.V038)
	const n = 7
	for h := int64(1); h <= n; h++ {
		f.signHeight(h)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// A conflicting prevote at the last height: refused, connection kept.
	_, err := f.c.SignVote(ctx, chainID, &privvaltest.Vote{Phase: signbytes.Prevote, Height: n, BlockID: block(n, 2),
		Timestamp: baseTime, ValidatorAddress: make([]byte, 20)})
	var rse *privvaltest.RemoteSignerError
	if !errors.As(err, &rse) || rse.Code != privval.CodeDoubleSign {
		t.Fatalf("conflicting prevote: %v", err)
	}
	if err := f.c.Ping(ctx); err != nil {
		t.Fatalf("ping after the refusal: %v", err)
	}
	// A request is counted once its answer is written: the ping's may
	// lag its answer, every earlier one is in.
	waitFor(t, "the ping counted", func() bool {
		return metric(f.scrape(), "signerkit_requests_total", "phase", "ping", "outcome", "signed") == 1
	})
	m := f.scrape()
	for _, ph := range []string{"proposal", "prevote", "precommit"} {
		if v := metric(m, "signerkit_requests_total", "chain", chainID, "phase", ph, "outcome", "signed"); v != n {
			t.Errorf("requests_total{%s,signed} = %v, want %d", ph, v, n)
		}
		if v := metric(m, "signerkit_request_duration_seconds_count", "chain", chainID, "phase", ph, "backend", "inprocess"); v < n {
			t.Errorf("request_duration_seconds_count{%s} = %v, want ≥ %d", ph, v, n)
		}
		// Each precommit for a block is two backend signs: the vote and
		// its extension.
		want := float64(n)
		if ph == "precommit" {
			want = 2 * n
		}
		if v := metric(m, "signerkit_sign_stage_duration_seconds_count", "phase", ph, "stage", "sign", "source", "measured"); v != want {
			t.Errorf("sign_stage_duration_seconds_count{%s,sign,measured} = %v, want %v", ph, v, want)
		}
		// Each new vote or proposal is one state write (an extension
		// writes none).
		if v := metric(m, "signerkit_sign_stage_duration_seconds_count", "phase", ph, "stage", "state", "source", "measured"); v != float64(n) {
			t.Errorf("sign_stage_duration_seconds_count{%s,state,measured} = %v, want %d", ph, v, n)
		}
		if v := metric(m, "signerkit_backend_sign_duration_seconds_count", "chain", chainID, "phase", ph); v != want {
			t.Errorf("backend_sign_duration_seconds_count{%s} = %v, want %v", ph, v, want)
		}
	}
	if v := metric(m, "signerkit_double_sign_refusals_total", "phase", "prevote"); v != 1 {
		t.Errorf("double_sign_refusals_total{prevote} = %v", v)
	}
	if v := metric(m, "signerkit_requests_total", "phase", "prevote", "outcome", "refused"); v != 1 {
		t.Errorf("requests_total{prevote,refused} = %v", v)
	}
	if v := metric(m, "signerkit_requests_total", "phase", "ping", "outcome", "signed"); v != 1 {
		t.Errorf("requests_total{ping} = %v", v)
	}
	for name, want := range map[string]float64{"signerkit_last_signed_height": n, "signerkit_last_signed_round": 0, "signerkit_last_signed_step": 3,
		"signerkit_validator_connected": 1, "signerkit_validator_connects_total": 1, "signerkit_backend_up": 1} {
		if v := metric(m, name); v != want {
			t.Errorf("%s = %v, want %v", name, v, want)
		}
	}
	if code, body := f.get("/readyz"); code != 200 {
		t.Errorf("/readyz %d %q", code, body)
	}
	if code, _ := f.get("/healthz"); code != 200 {
		t.Errorf("/healthz %d", code)
	}
	// The validator goes away (its listener too, or the daemon's redial
	// would be accepted into its backlog): not ready, and the disconnect
	// is counted.
	f.ln.Close()
	f.c.Close()
	waitFor(t, "validator_connected 0", func() bool { return metric(f.scrape(), "signerkit_validator_connected") == 0 })
	if code, body := f.get("/readyz"); code != 503 || !strings.Contains(body, "not connected") {
		t.Errorf("/readyz %d %q after the validator left", code, body)
	}
	if v := metric(f.scrape(), "signerkit_validator_disconnects_total", "reason", "eof"); v != 1 {
		t.Errorf("disconnects_total{eof} = %v", v)
	}
}

// waitFor polls cond; the deadline only stops a test that would hang.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestTM2Remote: gno's native protocol, the node dialing the daemon.
func TestTM2Remote(t *testing.T) {
	dir := t.TempDir()
	keyPath, pub := writeKey(t, dir, 3)
	sock := filepath.Join(shortDir(t), "s")
	f := &fixture{t: t, dir: dir, pub: pub, cfg: newConfig(t, dir, keyPath, ProtocolTM2Remote, "unix://"+sock)}
	if err := InitState(context.Background(), f.cfg.StateDir, chainID, 1); err != nil {
		t.Fatal(err)
	}
	if err := f.start(Options{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, err := privvaltest.DialNative(ctx, "unix", sock, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	for h := int64(1); h <= 3; h++ {
		sb, _ := signbytes.Message{Format: signbytes.TM2, Phase: signbytes.Prevote, Height: h, BlockID: block(h, 1), Timestamp: baseTime, ChainID: chainID}.Bytes()
		sig, err := nc.Sign(ctx, sb)
		if err != nil {
			t.Fatal(err)
		}
		if !ed25519.Verify(pub, sb, sig) {
			t.Fatal("signature does not verify")
		}
	}
	waitFor(t, "3 prevotes counted", func() bool {
		return metric(f.scrape(), "signerkit_requests_total", "phase", "prevote", "outcome", "signed") == 3
	})
}

func shortDir(t *testing.T) string {
	d, err := os.MkdirTemp("", "skd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// TestStartFailsClosed: no state, and a key other than the state's, each
// refuse to start with a message that says what to do.
func TestStartFailsClosed(t *testing.T) {
	dir := t.TempDir()
	keyA, _ := writeKey(t, dir, 1)
	keyB, _ := writeKey(t, dir, 2)
	ln, err := privvaltest.NewListener("unix", privval.V038)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cfg := newConfig(t, dir, keyA, ProtocolCometBFT038, "unix://"+ln.Address())
	check := func(err error, want string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("New: %v, want an error with %q", err, want)
		}
	}
	_, err = New(context.Background(), cfg, Options{})
	check(err, "signerkit state init")

	if err := InitState(context.Background(), cfg.StateDir, chainID, 1); err != nil {
		t.Fatal(err)
	}
	d, err := New(context.Background(), cfg, Options{}) // binds key A
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	cfg.Chains[0].Key = "inprocess:file=" + keyB
	_, err = New(context.Background(), cfg, Options{})
	check(err, "differs from")

	// Without the binding file, the state's last signature still tells.
	dir2 := t.TempDir()
	cfg2 := newConfig(t, dir2, keyA, ProtocolCometBFT038, "unix://"+ln.Address())
	if err := InitState(context.Background(), cfg2.StateDir, chainID, 1); err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, ln: ln, cfg: cfg2, dial: privval.V038}
	if err := f.start(Options{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if f.c, err = ln.Accept(ctx); err != nil {
		t.Fatal(err)
	}
	f.pub = ed25519.NewKeyFromSeed(bytesOf(1, 32)).Public().(ed25519.PublicKey)
	f.signHeight(1)
	f.c.Close()
	f.shutdown()
	if err := os.Remove(filepath.Join(cfg2.StateDir, KeysFile)); err != nil {
		t.Fatal(err)
	}
	cfg2.Chains[0].Key = "inprocess:file=" + keyB
	_, err = New(context.Background(), cfg2, Options{})
	check(err, "did not make the last signature")

	// A missing identity key is named.
	cfg2.Chains[0].Key = "inprocess:file=" + keyA
	cfg2.IdentityKey = filepath.Join(dir2, "nope.pem")
	_, err = New(context.Background(), cfg2, Options{})
	check(err, "identity_key")
}

// flakyKey is an Ed25519 key whose device can be unplugged.
type flakyKey struct {
	priv ed25519.PrivateKey
	gone *atomic.Bool
}

func (k *flakyKey) Public() crypto.PublicKey { return k.priv.Public() }
func (k *flakyKey) Close() error             { return nil }
func (k *flakyKey) Sign(_ io.Reader, msg []byte, _ crypto.SignerOpts) ([]byte, error) {
	return k.SignContext(context.Background(), msg)
}
func (k *flakyKey) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	if k.gone.Load() {
		return nil, fmt.Errorf("flaky: unplugged: %w", signer.ErrDisconnected)
	}
	return ed25519.Sign(k.priv, msg), nil
}

// TestBackendReopen: a device that goes away is reported (backend_up 0,
// /readyz, a typed cause), reopened with backoff while signs are refused,
// and signs again without a restart.
func TestBackendReopen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ln, err := privvaltest.NewListener("unix", privval.GnoTMKMS)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	priv := ed25519.NewKeyFromSeed(bytesOf(9, 32))
	var gone atomic.Bool
	var opens atomic.Int32
	open := func(ctx context.Context, uri string) (signer.Signer, error) {
		opens.Add(1)
		if gone.Load() {
			return nil, fmt.Errorf("flaky: no device: %w", signer.ErrDeviceNotFound)
		}
		return &flakyKey{priv: priv, gone: &gone}, nil
	}
	f := &fixture{t: t, ln: ln, dial: privval.GnoTMKMS, pub: priv.Public().(ed25519.PublicKey),
		cfg: newConfig(t, dir, "unused", ProtocolTM2TMKMS, "unix://"+ln.Address())}
	f.cfg.Chains[0].Key = "flaky:"
	if err := InitState(context.Background(), f.cfg.StateDir, chainID, 1); err != nil {
		t.Fatal(err)
	}
	if err := f.start(Options{Open: open, reopenBackoff: testReopenBackoff}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if f.c, err = ln.Accept(ctx); err != nil {
		t.Fatal(err)
	}
	f.signHeight(1)
	gone.Store(true)
	_, err = f.c.SignProposal(ctx, chainID, &privvaltest.Proposal{Height: 2, POLRound: -1, BlockID: block(2, 1), Timestamp: baseTime})
	var rse *privvaltest.RemoteSignerError
	if !errors.As(err, &rse) || rse.Code != privval.CodeSignerFailure {
		t.Fatalf("sign with the device gone: %v", err)
	}
	m := f.scrape()
	if v := metric(m, "signerkit_backend_up", "backend", "flaky"); v != 0 {
		t.Errorf("backend_up = %v", v)
	}
	if v := metric(m, "signerkit_backend_errors_total", "backend", "flaky", "cause", "disconnected"); v != 1 {
		t.Errorf("backend_errors_total{disconnected} = %v", v)
	}
	if code, body := f.get("/readyz"); code != 503 || !strings.Contains(body, "backend") {
		t.Errorf("/readyz %d %q", code, body)
	}
	waitFor(t, "a failed reopen", func() bool { return opens.Load() >= 3 })
	gone.Store(false)
	waitFor(t, "backend_up 1", func() bool { return metric(f.scrape(), "signerkit_backend_up") == 1 })
	// Height 2 was never signed, so it can be signed now.
	f.signHeight(2)
	m = f.scrape()
	if v := metric(m, "signerkit_backend_reopens_total", "result", "ok"); v != 1 {
		t.Errorf("reopens_total{ok} = %v", v)
	}
	if v := metric(m, "signerkit_backend_reopens_total", "result", "error"); v < 1 {
		t.Errorf("reopens_total{error} = %v", v)
	}
	if code, _ := f.get("/readyz"); code != 200 {
		t.Errorf("/readyz %d after recovery", code)
	}
}

func TestHandshakeLimiter(t *testing.T) {
	l := newHandshakeLimiter(nopCounter{})
	if d := l.delay("a"); d != 0 {
		t.Fatalf("delay before any failure: %v", d)
	}
	var last time.Duration
	for i := 0; i < 10; i++ {
		l.result("a", false)
		d := l.delay("a")
		if d < last || d > maxHandshakeDelay || d < minHandshakeDelay {
			t.Fatalf("after %d failures delay %v (last %v)", i+1, d, last)
		}
		last = d
	}
	if last != maxHandshakeDelay {
		t.Fatalf("delay capped at %v, want %v", last, maxHandshakeDelay)
	}
	if l.delay("b") != 0 {
		t.Fatal("another host is delayed")
	}
	l.result("a", true)
	if l.delay("a") != 0 {
		t.Fatal("a success does not reset")
	}
}

// TestShutdownGraceExpires: a sign still in flight when shutdown_grace
// ends is abandoned, Run says so with an error (signerkit exits 1), and
// the signature it makes afterwards is never released.
func TestShutdownGraceExpires(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ln, err := privvaltest.NewListener("unix", privval.GnoTMKMS)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	k := signertest.NewFakeKey(ed25519.NewKeyFromSeed(bytesOf(4, 32)))
	entered, release := k.Hold() // a sign never finishes until released
	cfg := newConfig(t, dir, "unused", ProtocolTM2TMKMS, "unix://"+ln.Address())
	cfg.Chains[0].Key, cfg.ShutdownGrace, cfg.Chains[0].SignTimeout = "stuck:", 100*time.Millisecond, time.Minute
	if err := InitState(context.Background(), cfg.StateDir, chainID, 1); err != nil {
		t.Fatal(err)
	}
	d, err := New(context.Background(), cfg, Options{Open: func(context.Context, string) (signer.Signer, error) { return k, nil }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	actx, acancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer acancel()
	c, err := ln.Accept(actx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	answer := make(chan error, 1)
	go func() {
		_, err := c.SignVote(actx, chainID, &privvaltest.Vote{Phase: signbytes.Prevote, Height: 3, BlockID: block(3, 1), Timestamp: baseTime})
		answer <- err
	}()
	<-entered
	cancel() // SIGTERM
	err = <-done
	if err == nil || !strings.Contains(err.Error(), "did not return") {
		t.Fatalf("Run: %v, want the grace period's error", err)
	}
	close(release)
	if err := <-answer; err == nil {
		t.Fatal("a signature left after the grace period")
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}
