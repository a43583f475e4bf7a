package interop

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/interop/internal/testbin"
	"github.com/signerkit/signerkit/keybase"
	"github.com/signerkit/signerkit/pkcs11"
	"github.com/signerkit/signerkit/pkcs11/pkcs11test"
	"github.com/signerkit/signerkit/signer"
)

// The daemon tests start the signerkit binary (cmd/signerkit) as a
// process, as an operator runs it, and the simulators' commands
// (cmd/ledgersim, cmd/yubihsmsim) as separate processes, against gno's and
// CometBFT's own validator-side code. SIGNERKIT_BIN_DIR, when set, names a
// directory holding the three binaries already built; otherwise they are
// built once, from the main module, into a temporary directory.

const skChain = "interop-daemon"

// skBin returns the path of one of the commands: "signerkit", "ledgersim"
// or "yubihsmsim" (testbin.Signerkit).
func skBin(t *testing.T, name string) string { return testbin.Signerkit(t, name) }

// lockedBuffer collects a process's output.
type lockedBuffer = testbin.LockedBuffer

// skProc is a running signerkit.
type skProc struct {
	cmd     *exec.Cmd
	log     *lockedBuffer
	done    chan error
	metrics string // http://host:port
}

var metricsURL = regexp.MustCompile(`msg=metrics url=(http://[0-9.:]+)/metrics`)

// waitLog waits up to 30 s for a line of p's log that re matches, and
// returns re's submatches: skStart returns once the metrics server is up,
// which the daemon may log before it logs its listeners.
func (p *skProc) waitLog(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := re.FindStringSubmatch(p.log.String()); m != nil {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("no log line matches %s:\n%s", re, p.log)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// skStart starts `signerkit start -config cfgPath` and waits until it
// serves its metrics.
func skStart(t *testing.T, cfgPath string) *skProc {
	t.Helper()
	p := &skProc{cmd: exec.Command(skBin(t, "signerkit"), "start", "-config", cfgPath), log: &lockedBuffer{}, done: make(chan error, 1)}
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
		p.done <- nil
		if t.Failed() {
			t.Logf("signerkit log:\n%s", p.log)
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := metricsURL.FindStringSubmatch(p.log.String()); m != nil {
			p.metrics = m[1]
			return p
		}
		select {
		case err := <-p.done:
			p.done <- err
			t.Fatalf("signerkit exited (%v):\n%s", err, p.log)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("signerkit serves no metrics:\n%s", p.log)
		}
	}
}

// stop sends SIGTERM and checks the exit status is 0.
func (p *skProc) stop(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-p.done:
		p.done <- err
		if err != nil {
			t.Fatalf("signerkit exit: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("signerkit did not stop")
	}
}

// metric returns the value of name{labels…} on /metrics, or -1.
func (p *skProc) metric(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	text, err := testbin.Scrape(p.metrics)
	if err != nil {
		t.Fatal(err)
	}
	return testbin.Metric(text, name, labels...)
}

// waitMetric waits until name{labels…} is want (a request is counted just
// after its answer is written) and fails if it goes past it.
func (p *skProc) waitMetric(t *testing.T, want float64, name string, labels ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		v := p.metric(t, name, labels...)
		if v == want {
			return
		}
		if v > want || time.Now().After(deadline) {
			t.Fatalf("%s%v = %v, want %v", name, labels, v, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// skSetup writes signerkit.toml for one chain, an identity key (seed
// 0x62) and a state initialised at height 1. validator is the
// [[chain.validator]] body (addr, allow).
func skSetup(t *testing.T, protocol, keyURI, validator string) (cfgPath string, identity ed25519.PublicKey) {
	t.Helper()
	dir := t.TempDir()
	idPriv := pvIdentity(0x62)
	if err := inprocess.WriteKeyFile(filepath.Join(dir, "identity.pem"), idPriv); err != nil {
		t.Fatal(err)
	}
	cfgPath = filepath.Join(dir, "signerkit.toml")
	cfg := fmt.Sprintf(`state_dir = %q
identity_key = %q
metrics_addr = "127.0.0.1:0"
shutdown_grace = "10s"
log_level = "debug"

[[chain]]
id = %q
protocol = %q
key = %q

  [[chain.validator]]
%s
`, filepath.Join(dir, "state"), filepath.Join(dir, "identity.pem"), skChain, protocol, keyURI, validator)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "state"), 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(skBin(t, "signerkit"), "state", "init", "-config", cfgPath, "-height", "1").CombinedOutput(); err != nil {
		t.Fatalf("state init: %v\n%s", err, out)
	}
	return cfgPath, pvPub(idPriv)
}

// startSim starts a simulator command and returns the address it prints.
func startSim(t *testing.T, name string, args ...string) string {
	t.Helper()
	return testbin.StartSim(t, skBin(t, name), args...)
}

// backend is a key behind one of signerkit's backends, ready for a config.
type backend struct {
	name string
	uri  string
	pub  ed25519.PublicKey
}

// skBackends are the backends the daemon tests run on.
var skBackends = []string{"ledgersim", "yubihsmsim", "softhsm", "keybase"}

// newBackend puts the Ed25519 key of seed behind the named backend:
// a simulated Ledger (cmd/ledgersim, over its Speculos port), a simulated
// YubiHSM 2 (cmd/yubihsmsim, a yubihsm-connector), a SoftHSM2 token
// (PKCS#11) or a gnokey keybase file.
func newBackend(t *testing.T, name string, seed byte) backend {
	t.Helper()
	seedBytes := bytes.Repeat([]byte{seed}, 32)
	priv := ed25519.NewKeyFromSeed(seedBytes)
	b := backend{name: name, pub: pvPub(priv)}
	ctx := context.Background()
	switch name {
	case "ledgersim":
		addr := startSim(t, "ledgersim", "-addr", "127.0.0.1:0", "-seed", hex.EncodeToString(seedBytes))
		b.uri = "ledger:speculos=" + addr
	case "yubihsmsim":
		url := startSim(t, "yubihsmsim", "-addr", "127.0.0.1:0", "-seed", hex.EncodeToString(seedBytes), "-key-id", "64", "-label", "validator")
		t.Setenv("SK_INTEROP_HSM_PASS", "password")
		b.uri = "yubihsm:connector=" + url + ";auth-key=1;label=validator?pin-source=env:SK_INTEROP_HSM_PASS"
	case "softhsm":
		tok := pkcs11test.New(t) // SOFTHSM2_CONF, which signerkit inherits
		st, err := pkcs11.OpenStore(ctx, tok.Config())
		if err != nil {
			t.Fatal(err)
		}
		_, err = st.ImportKey(ctx, priv, signer.Ed25519, "validator")
		st.Close()
		if err != nil {
			t.Fatal(err)
		}
		b.uri = tok.URI("validator")
	case "keybase":
		dir := filepath.Join(t.TempDir(), "gnokey")
		t.Setenv("SK_INTEROP_KB_PASS", "interop passphrase")
		st, err := keybase.OpenStore(ctx, keybase.Config{Dir: dir, Secret: signer.SecretEnv("SK_INTEROP_KB_PASS"), Cost: 4})
		if err != nil {
			t.Fatal(err)
		}
		_, err = st.ImportKey(ctx, priv, signer.Ed25519, "validator")
		st.Close()
		if err != nil {
			t.Fatal(err)
		}
		b.uri = "keybase:dir=" + dir + ";label=validator?pin-source=env:SK_INTEROP_KB_PASS"
	default:
		t.Fatalf("no backend %q", name)
	}
	return b
}

var refusedLine = regexp.MustCompile(`msg="double sign refused".*? phase=(\w+) height=(\d+) round=(\d+)`)

// checkRefusedOnlyEarlierSteps fails t if sk refused, as a double sign,
// anything but a step earlier than step at exactly height and round: the
// one request a node restarted mid-height makes again (its proposal after
// its prevote), which FilePV refuses as a step regression too. Any other
// refusal means the node asked for a conflicting vote.
func checkRefusedOnlyEarlierSteps(t *testing.T, sk *skProc, height, round int64, step int8) {
	t.Helper()
	steps := map[string]int8{"proposal": 1, "prevote": 2, "precommit": 3}
	lines := refusedLine.FindAllStringSubmatch(sk.log.String(), -1)
	for _, m := range lines {
		s, ok := steps[m[1]]
		if !ok || m[2] != strconv.FormatInt(height, 10) || m[3] != strconv.FormatInt(round, 10) || s >= step {
			t.Errorf("signerkit refused %s at %s/%s; only a step before %s at %d/%d may be asked again: %s",
				m[1], m[2], m[3], stepWord(step), height, round, m[0])
		}
	}
	if r := sk.metricSum(t, "signerkit_double_sign_refusals_total"); int(r) != len(lines) {
		t.Errorf("signerkit counted %v double-sign refusals and logged %d", r, len(lines))
	} else if r > 0 {
		t.Logf("signerkit refused %v request(s) the restarted node made again for an earlier step", r)
	}
}
