package daemon

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signerkit/signerkit/internal/proctest"
	_ "github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/privval"
	"github.com/signerkit/signerkit/privval/privvaltest"
	"github.com/signerkit/signerkit/signbytes"
	_ "github.com/signerkit/signerkit/yubihsm"
)

// simBin returns the simulator c (a key of simulators), built once per
// test binary (TestMain starts the builds).
func simBin(t *testing.T, c string) string {
	t.Helper()
	return proctest.BuildPackage(t, simulators[c], c)
}

// simProcess is a simulator running as a process of its own.
type simProcess struct {
	t    *testing.T
	bin  string
	args []string // without -addr
	addr string   // host:port it listens on, kept across restarts
	cmd  *exec.Cmd
	done chan struct{}
}

// startSimProcess starts the simulator bin on a free port and returns it with the
// address it printed (host:port; a URL's scheme is dropped).
func startSimProcess(t *testing.T, bin string, args ...string) *simProcess {
	t.Helper()
	p := &simProcess{t: t, bin: bin, args: args}
	p.addr = "127.0.0.1:0"
	if err := p.start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.kill)
	return p
}

func (p *simProcess) start() error {
	cmd := exec.Command(p.bin, append([]string{"-addr", p.addr}, p.args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		s.Scan()
		line <- s.Text()
		for s.Scan() {
		}
	}()
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		close(done)
	}()
	select {
	case l := <-line:
		if l == "" {
			<-done
			return fmt.Errorf("%s exited without an address; stderr:\n%s", filepath.Base(p.bin), stderr.String())
		}
		p.addr = strings.TrimPrefix(l, "http://")
	case <-time.After(60 * time.Second): // only stops a hang
		cmd.Process.Kill()
		<-done
		return fmt.Errorf("%s printed no address; stderr:\n%s", filepath.Base(p.bin), stderr.String())
	}
	p.cmd, p.done = cmd, done
	return nil
}

// kill SIGKILLs the process, as a crash or a pulled cable would end it.
func (p *simProcess) kill() {
	if p.cmd == nil {
		return
	}
	p.cmd.Process.Kill()
	<-p.done
	p.cmd = nil
}

// restart starts the simulator again on the same address, with the same
// flags (and so the same key), retrying while the port is not free yet.
func (p *simProcess) restart() {
	p.t.Helper()
	var err error
	for range 50 {
		if err = p.start(); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.t.Fatalf("restart on %s: %v", p.addr, err)
}

// signed is one signature the validator got, with what it signed.
type signed struct {
	height    int64
	phase     signbytes.Phase
	signBytes []byte
	sig       []byte
}

// stream is a validator asking for a proposal, a prevote and a precommit
// at each height, asking again for the same one (same block) when the
// signer refuses, until stopped. It stops between requests, never in the
// middle of one (which would leave its answer on the connection).
type stream struct {
	f        *fixture
	stopped  atomic.Bool
	mu       sync.Mutex
	got      []signed
	failures atomic.Int64
	height   atomic.Int64 // the height being signed
	errs     []string     // signer errors that were not a RemoteSignerError of a failing device
}

func (s *stream) run() {
	for h := int64(1); !s.stopped.Load(); h++ {
		s.height.Store(h)
		for _, ph := range []signbytes.Phase{signbytes.Proposal, signbytes.Prevote, signbytes.Precommit} {
			for !s.stopped.Load() {
				sg, err := s.one(context.Background(), h, ph)
				if err == nil {
					s.mu.Lock()
					s.got = append(s.got, sg)
					s.mu.Unlock()
					break
				}
				var rse *privvaltest.RemoteSignerError
				if !errors.As(err, &rse) || rse.Code != privval.CodeSignerFailure {
					s.mu.Lock()
					s.errs = append(s.errs, fmt.Sprintf("height %d %v: %v", h, ph, err))
					s.mu.Unlock()
					return
				}
				s.failures.Add(1)
				time.Sleep(20 * time.Millisecond)
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// one asks for one signature and returns it with the sign bytes the
// validator builds for it (signbytes, TM2 format).
func (s *stream) one(ctx context.Context, h int64, ph signbytes.Phase) (signed, error) {
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	b, ts := block(h, 1), baseTime.Add(time.Duration(h)*time.Second)
	m := signbytes.Message{Format: signbytes.TM2, Phase: ph, ChainID: chainID, Height: h, BlockID: b}
	var sig []byte
	if ph == signbytes.Proposal {
		p, err := s.f.c.SignProposal(rctx, chainID, &privvaltest.Proposal{Height: h, POLRound: -1, BlockID: b, Timestamp: ts})
		if err != nil {
			return signed{}, err
		}
		m.POLRound, m.Timestamp, sig = -1, p.Timestamp, p.Signature
	} else {
		v, err := s.f.c.SignVote(rctx, chainID, &privvaltest.Vote{Phase: ph, Height: h, BlockID: b, Timestamp: ts, ValidatorAddress: make([]byte, 20)})
		if err != nil {
			return signed{}, err
		}
		m.Timestamp, sig = v.Timestamp, v.Signature
	}
	sb, err := m.Bytes()
	if err != nil {
		return signed{}, err
	}
	return signed{height: h, phase: ph, signBytes: sb, sig: sig}, nil
}

func (s *stream) heightsSigned() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.got) == 0 {
		return 0
	}
	last := s.got[len(s.got)-1]
	if last.phase == signbytes.Precommit {
		return last.height
	}
	return last.height - 1
}

// TestDeviceLossRealSimulators runs the daemon against a simulator
// running as a process — cmd/yubihsmsim as a yubihsm-connector, and
// cmd/ledgersim on its Speculos port — kills the process with SIGKILL
// while a validator is signing, and checks that the loss is reported
// (/readyz 503 with a typed cause, backend_up 0, signs refused with a
// RemoteSignerError), that the simulator started again on the same
// address with the same key is taken back without a restart, that no
// height, round and step was signed twice over different bytes, and that
// every signature verifies with crypto/ed25519.
func TestDeviceLossRealSimulators(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the simulators as processes")
	}
	t.Parallel()
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = byte(0x40 + i)
	}
	pub := ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
	for _, c := range []struct {
		name, backend string
		sim           func(t *testing.T) (*simProcess, string)
	}{
		{"yubihsmsim", "yubihsm", func(t *testing.T) (*simProcess, string) {
			p := startSimProcess(t, simBin(t, "yubihsmsim"), "-seed", hex.EncodeToString(seed), "-key-id", "64", "-label", "validator")
			return p, "yubihsm:connector=http://" + p.addr + ";auth-key=1;label=validator?pin-value=password&request-timeout=2s"
		}},
		{"ledgersim", "ledgersim", func(t *testing.T) (*simProcess, string) {
			p := startSimProcess(t, simBin(t, "ledgersim"), "-seed", hex.EncodeToString(seed), "-time", "accounted")
			return p, "ledgersim:speculos=" + p.addr
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			sim, uri := c.sim(t)
			testDeviceLoss(t, sim, uri, c.backend, pub)
		})
	}
}

func testDeviceLoss(t *testing.T, sim *simProcess, uri, backend string, pub ed25519.PublicKey) {
	ln, err := privvaltest.NewListener("unix", privval.GnoTMKMS)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	f := &fixture{t: t, ln: ln, dial: privval.GnoTMKMS, pub: pub, cfg: newConfig(t, t.TempDir(), "unused", ProtocolTM2TMKMS, "unix://"+ln.Address())}
	f.cfg.Chains[0].Key = uri
	if err := InitState(context.Background(), f.cfg.StateDir, chainID, 1); err != nil {
		t.Fatal(err)
	}
	if err := f.start(Options{HealthInterval: 100 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	actx, acancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer acancel()
	if f.c, err = ln.Accept(actx); err != nil {
		t.Fatal(err)
	}
	defer f.c.Close()
	waitFor(t, "/readyz 200", func() bool { code, _ := f.get("/readyz"); return code == 200 })

	s := &stream{f: f}
	streamDone := make(chan struct{})
	go func() {
		defer close(streamDone)
		s.run()
	}()
	stop := func() {
		s.stopped.Store(true)
		<-streamDone
	}
	defer stop()
	waitFor(t, "3 heights signed", func() bool { return s.heightsSigned() >= 3 })

	// The device goes away mid-stream.
	sim.kill()
	waitFor(t, "/readyz 503 with the device down", func() bool {
		code, body := f.get("/readyz")
		return code == 503 && strings.Contains(body, "backend "+backend+" down")
	})
	_, body := f.get("/readyz")
	if !strings.Contains(body, ": disconnected") && !strings.Contains(body, ": device_not_found") {
		t.Errorf("/readyz %q names no typed cause (disconnected, device_not_found)", body)
	}
	m := f.scrape()
	if v := metric(m, "signerkit_backend_up", "backend", backend); v != 0 {
		t.Errorf("backend_up = %v with the simulator killed", v)
	}
	if v := max(metric(m, "signerkit_backend_errors_total", "backend", backend, "cause", "disconnected"), 0) +
		max(metric(m, "signerkit_backend_errors_total", "backend", backend, "cause", "device_not_found"), 0); v < 1 {
		t.Errorf("backend_errors_total{disconnected|device_not_found} = %v", v)
	}
	failures := s.failures.Load()
	waitFor(t, "signs refused while the device is gone", func() bool { return s.failures.Load() > failures })
	waitFor(t, "a failed reopen", func() bool {
		return metric(f.scrape(), "signerkit_backend_reopens_total", "backend", backend, "result", "error") >= 1
	})
	if code, _ := f.get("/readyz"); code != 503 {
		t.Errorf("/readyz %d while the device is gone", code)
	}
	downAt := s.heightsSigned()

	// It comes back on the same address with the same key.
	sim.restart()
	waitFor(t, "backend_up 1", func() bool { return metric(f.scrape(), "signerkit_backend_up", "backend", backend) == 1 })
	waitFor(t, "3 more heights signed", func() bool { return s.heightsSigned() >= downAt+3 })
	waitFor(t, "/readyz 200", func() bool { code, _ := f.get("/readyz"); return code == 200 })
	stop()

	s.mu.Lock()
	for _, e := range s.errs {
		t.Errorf("the validator got: %s", e)
	}
	type hrs struct {
		h  int64
		ph signbytes.Phase
	}
	seen := map[hrs][]byte{}
	var last signed
	for _, g := range s.got {
		if !ed25519.Verify(pub, g.signBytes, g.sig) {
			t.Errorf("height %d %v: the signature does not verify", g.height, g.phase)
		}
		k := hrs{g.height, g.phase}
		if prev, ok := seen[k]; ok && string(prev) != string(g.signBytes) {
			t.Errorf("height %d %v signed twice over different bytes", g.height, g.phase)
		}
		seen[k] = g.signBytes
		last = g
	}
	s.mu.Unlock()
	if len(seen) != len(s.got) {
		t.Errorf("%d signatures for %d heights, rounds and steps", len(s.got), len(seen))
	}

	// The state is the last signature handed out, and a request for its
	// height, round and step over another block is refused.
	st, err := f.d.gs[uri].State(context.Background(), chainID)
	if err != nil {
		t.Fatal(err)
	}
	if st.Height != last.height || st.Step != last.phase.Step() || string(st.Signature) != string(last.sig) {
		t.Errorf("state at %d/%d, want the last signed, %d %v", st.Height, st.Step, last.height, last.phase)
	}
	rctx, rcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer rcancel()
	if last.phase == signbytes.Proposal {
		_, err = f.c.SignProposal(rctx, chainID, &privvaltest.Proposal{Height: last.height, POLRound: -1, BlockID: block(last.height, 2), Timestamp: baseTime})
	} else {
		_, err = f.c.SignVote(rctx, chainID, &privvaltest.Vote{Phase: last.phase, Height: last.height, BlockID: block(last.height, 2),
			Timestamp: baseTime, ValidatorAddress: make([]byte, 20)})
	}
	var rse *privvaltest.RemoteSignerError
	if !errors.As(err, &rse) || rse.Code != privval.CodeDoubleSign {
		t.Errorf("a conflicting %v at height %d after recovery: %v, want a double-sign refusal", last.phase, last.height, err)
	}
	m = f.scrape()
	if v := metric(m, "signerkit_backend_reopens_total", "backend", backend, "result", "ok"); v != 1 {
		t.Errorf("backend_reopens_total{ok} = %v, want 1", v)
	}

	// The device goes away while nothing is signing: /readyz's probe
	// finds it, the backend is reopened once it is back, and it signs.
	sim.kill()
	waitFor(t, "/readyz 503 from a probe", func() bool {
		code, body := f.get("/readyz")
		return code == 503 && strings.Contains(body, "backend "+backend+" down")
	})
	m = f.scrape()
	if v := max(metric(m, "signerkit_backend_health_checks_total", "backend", backend, "result", "disconnected"), 0) +
		max(metric(m, "signerkit_backend_health_checks_total", "backend", backend, "result", "device_not_found"), 0); v != 1 {
		t.Errorf("backend_health_checks_total{disconnected|device_not_found} = %v, want 1", v)
	}
	if v := metric(m, "signerkit_backend_up", "backend", backend); v != 0 {
		t.Errorf("backend_up = %v after the probe found the device gone", v)
	}
	sim.restart()
	waitFor(t, "backend_up 1 again", func() bool { return metric(f.scrape(), "signerkit_backend_up", "backend", backend) == 1 })
	next := last.height + 1
	g, err := s.one(context.Background(), next, signbytes.Proposal)
	if err != nil {
		t.Fatalf("proposal at %d once the device is back: %v", next, err)
	}
	if !ed25519.Verify(pub, g.signBytes, g.sig) {
		t.Errorf("proposal at %d: the signature does not verify", next)
	}
	t.Logf("%d signatures, %d refused while the device was gone, %d heights after it came back",
		len(s.got), s.failures.Load(), last.height-downAt)
}
