package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/signerkit/signerkit/daemon"
	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/internal/proctest"
	"github.com/signerkit/signerkit/keybase"
	"github.com/signerkit/signerkit/keyfmt"
	"github.com/signerkit/signerkit/privval"
	"github.com/signerkit/signerkit/privval/privvaltest"
	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
)

// TestMain starts building the command while the in-process tests run;
// the tests that run it wait for the build (signerkit), made once.
func TestMain(m *testing.M) {
	proctest.Prebuild(".", "signerkit")
	os.Exit(proctest.Main(m))
}

// signerkit returns the built command.
func signerkit(t *testing.T) string {
	t.Helper()
	return proctest.Build(t, "signerkit")
}

// command is the command signerkit with args, its environment the test's
// with env added.
func command(t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(signerkit(t), args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	return cmd
}

// logBuffer collects a process's stderr and lets a test wait for a line.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// proc is a running signerkit.
type proc struct {
	cmd  *exec.Cmd
	log  *logBuffer
	done chan error
}

func startProc(t *testing.T, args ...string) *proc {
	t.Helper()
	return startProcEnv(t, nil, args...)
}

// startProcEnv is startProc with env added to the process's environment.
func startProcEnv(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: command(t, env, args...), log: &logBuffer{}, done: make(chan error, 1)}
	p.cmd.Stderr = p.log
	p.cmd.Stdout = p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("signerkit log:\n%s", p.log)
		}
	})
	return p
}

// wait returns the process's exit error; the deadline stops a hung test.
func (p *proc) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-p.done:
		p.done <- err
		return err
	case <-time.After(30 * time.Second):
		t.Fatalf("signerkit still running; log:\n%s", p.log)
	}
	return nil
}

func runCmd(t *testing.T, args ...string) string {
	t.Helper()
	return runCmdEnv(t, nil, args...)
}

// runCmdEnv is runCmd with env added to the command's environment.
func runCmdEnv(t *testing.T, env []string, args ...string) string {
	t.Helper()
	out, err := command(t, env, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("signerkit %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// setup writes a config for one chain whose validator is ln, a key file
// and an initialised state, and returns the config's path.
func setup(t *testing.T, protocol, key, addr, extra string) (dir, cfgPath string) {
	t.Helper()
	return setupEnv(t, nil, protocol, key, addr, extra)
}

// setupEnv is setup with env added to the environment of the command
// that initialises the state.
func setupEnv(t *testing.T, env []string, protocol, key, addr, extra string) (dir, cfgPath string) {
	t.Helper()
	dir = t.TempDir()
	cfgPath = filepath.Join(dir, "signerkit.toml")
	writeConfig(t, cfgPath, dir, protocol, key, addr, extra)
	if err := os.Mkdir(filepath.Join(dir, "state"), 0o700); err != nil {
		t.Fatal(err)
	}
	runCmdEnv(t, env, "state", "init", "-config", cfgPath, "-height", "1")
	return dir, cfgPath
}

func writeConfig(t *testing.T, path, dir, protocol, key, addr, extra string) {
	t.Helper()
	id := ""
	if strings.HasPrefix(addr, "tcp://") {
		id = fmt.Sprintf("identity_key = %q", filepath.Join(dir, "identity.pem"))
	}
	cfg := fmt.Sprintf(`state_dir = %q
%s
shutdown_grace = "20s"
log_level = "debug"

[[chain]]
id = "test-chain"
protocol = %q
key = %q

  [[chain.validator]]
  addr = %q
%s
`, filepath.Join(dir, "state"), id, protocol, key, addr, extra)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
}

func writeKey(t *testing.T, path string, seed byte) ed25519.PublicKey {
	t.Helper()
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, 32))
	if err := inprocess.WriteKeyFile(path, priv); err != nil {
		t.Fatal(err)
	}
	return priv.Public().(ed25519.PublicKey)
}

func listener(t *testing.T, network string) *privvaltest.Listener {
	t.Helper()
	ln, err := privvaltest.NewListener(network, privval.V034)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

func accept(t *testing.T, ln *privvaltest.Listener) *privvaltest.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := ln.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func prevote(h int64, tag []byte) *privvaltest.Vote {
	b := signbytes.BlockID{Hash: bytes.Repeat(tag, 32/len(tag)), PartSetHeader: signbytes.PartSetHeader{Total: 1, Hash: bytes.Repeat([]byte{7}, 32)}}
	return &privvaltest.Vote{Phase: signbytes.Prevote, Height: h, BlockID: b, Timestamp: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		ValidatorAddress: make([]byte, 20)}
}

func voteBytes(t *testing.T, v *privvaltest.Vote) []byte {
	t.Helper()
	sb, err := signbytes.Message{Format: signbytes.CometBFT, Phase: v.Phase, Height: v.Height, Round: int64(v.Round), BlockID: v.BlockID,
		Timestamp: v.Timestamp, ChainID: "test-chain"}.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return sb
}

// TestCommands: init, keys show, state show and version, run as an
// operator runs them.
func TestCommands(t *testing.T) {
	t.Parallel()
	home := filepath.Join(t.TempDir(), "home")
	out := runCmd(t, "init", "-home", home, "-chain", "c1", "-key", "inprocess:file="+filepath.Join(home, "v.pem"))
	if !strings.Contains(out, "identity ed25519:") || !strings.Contains(out, "no double-sign state for chain c1") ||
		!strings.Contains(out, "signerkit state init -config "+filepath.Join(home, "signerkit.toml")+" -chain c1 -height H") {
		t.Fatalf("init: %s", out)
	}
	cfgPath := filepath.Join(home, "signerkit.toml")
	if _, err := daemon.LoadConfig(cfgPath); err != nil {
		t.Fatalf("the config init writes does not load: %v", err)
	}
	if out, err := command(t, nil, "init", "-home", home).CombinedOutput(); err == nil || !strings.Contains(string(out), "never overwrites") {
		t.Fatalf("second init: %v %s", err, out)
	}
	pub := writeKey(t, filepath.Join(home, "v.pem"), 5)
	out = runCmd(t, "keys", "show", "-config", cfgPath)
	addr, _ := keybase.Address(pub)
	for _, want := range []string{fmt.Sprintf("ed25519:%x", []byte(pub)), addr, CometBFTAddress(pub), keyfmt.GnoPubKey(pub), `"@type": "/tm.PubKeyEd25519"`, `"type": "tendermint/PubKeyEd25519"`} {
		if !strings.Contains(out, want) {
			t.Errorf("keys show lacks %s:\n%s", want, out)
		}
	}
	// gno's address of this seed, as gnokey shows it for an Ed25519 key,
	// is the bech32 of the first 20 bytes of SHA-256: the same 20 bytes
	// as CometBFT's validator address.
	if !strings.HasPrefix(addr, "g1") {
		t.Errorf("gno address %s", addr)
	}
	// init without -height wrote no state: start refuses, naming the fix.
	out = runCmd(t, "state", "show", "-config", cfgPath)
	if !strings.Contains(out, "c1") || !strings.Contains(out, "no state") {
		t.Errorf("state show after init without -height:\n%s", out)
	}
	p := startProc(t, "start", "-config", cfgPath)
	var ee *exec.ExitError
	if err := p.wait(t); !errors.As(err, &ee) || ee.ExitCode() != 1 ||
		!strings.Contains(p.log.String(), "no double-sign state") || !strings.Contains(p.log.String(), "signerkit state init -config "+cfgPath) {
		t.Fatalf("start with no state: %v, log:\n%s", err, p.log)
	}
	runCmd(t, "state", "init", "-config", cfgPath, "-height", "1")
	out = runCmd(t, "state", "show", "-config", cfgPath)
	if !strings.Contains(out, "c1") || !strings.Contains(out, "nothing signed yet") {
		t.Errorf("state show:\n%s", out)
	}
	runCmd(t, "state", "init", "-config", cfgPath, "-height", "100")
	if out := runCmd(t, "state", "show", "-config", cfgPath); !strings.Contains(out, "c1     100") && !strings.Contains(out, " 100 ") {
		t.Errorf("state show after init 100:\n%s", out)
	}
	if out, err := command(t, nil, "state", "init", "-config", cfgPath, "-height", "50").CombinedOutput(); err == nil {
		t.Errorf("state init lowered the state:\n%s", out)
	}
	if out := runCmd(t, "version"); !strings.HasPrefix(out, "signerkit ") {
		t.Errorf("version: %q", out)
	}
	// keys import into a keybase and list it.
	kb := filepath.Join(t.TempDir(), "kb")
	env := []string{"SK_TEST_PASS=correct horse"}
	out = runCmdEnv(t, env, "keys", "import", "-from", filepath.Join(home, "v.pem"), "-to", "keybase:dir="+kb+";label=val?pin-source=env:SK_TEST_PASS")
	if !strings.Contains(out, addr) {
		t.Errorf("keys import:\n%s", out)
	}
	out = runCmdEnv(t, env, "keys", "list", "keybase:dir="+kb)
	if !strings.Contains(out, "val") || !strings.Contains(out, addr) {
		t.Errorf("keys list:\n%s", out)
	}
}

// TestStartFailsClosed: the binary refuses to start, exit 1, with the fix.
func TestStartFailsClosed(t *testing.T) {
	t.Parallel()
	ln := listener(t, "tcp")
	dir, cfgPath := setup(t, "cometbft-v0.34", "inprocess:file=k.pem", "unix:///nonexistent/s", "")
	writeConfig(t, cfgPath, dir, "cometbft-v0.34", "inprocess:file=k.pem", "tcp://"+ln.Address(), "")
	p := startProc(t, "start", "-config", cfgPath)
	err := p.wait(t)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(p.log.String(), "no allowlist") {
		t.Fatalf("exit %v, log:\n%s", err, p.log)
	}
	writeConfig(t, cfgPath, dir, "cometbft-v0.34", "inprocess:file="+filepath.Join(dir, "k.pem"), "unix:///nonexistent/s", "  unknown_key = 1")
	p = startProc(t, "start", "-config", cfgPath)
	if err := p.wait(t); err == nil || !strings.Contains(p.log.String(), cfgPath+":13: chain.validator.unknown_key: unknown key") {
		t.Fatalf("exit %v, log:\n%s", err, p.log)
	}
}

// TestSIGTERMFinishesInFlightSign: SIGTERM while a sign is in flight (a
// per-sign keybase key runs bcrypt, ~0.3 s, on every sign) answers it,
// syncs the state and exits 0; a sign answered is in the state, one not
// answered is not.
func TestSIGTERMFinishesInFlightSign(t *testing.T) {
	t.Parallel()
	kb := filepath.Join(t.TempDir(), "kb")
	// The processes read the passphrase from SK_TEST_PASS; the
	// environment is theirs alone, so that the tests can run in parallel.
	env := []string{"SK_TEST_PASS=pass"}
	st, err := keybase.OpenStore(context.Background(), keybase.Config{Dir: kb, Secret: signer.SecretBytes([]byte("pass"))})
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.GenerateKey(context.Background(), signer.Ed25519, "val")
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	pub := info.Public.(ed25519.PublicKey)
	ln := listener(t, "unix")
	_, cfgPath := setupEnv(t, env, "cometbft-v0.34", "keybase:dir="+kb+";label=val?pin-source=env:SK_TEST_PASS&mode=per-sign", "unix://"+ln.Address(), "")
	inFlight := 0
	for h := int64(1); h <= 10 && inFlight < 2; h++ {
		p := startProcEnv(t, env, "start", "-config", cfgPath)
		c := accept(t, ln)
		v := prevote(h, []byte{byte(h)})
		answer := make(chan error, 1)
		var got *privvaltest.Vote
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var err error
			got, err = c.SignVote(ctx, "test-chain", v)
			answer <- err
		}()
		time.Sleep(50 * time.Millisecond) // usually inside the 0.3 s sign; either way is checked
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		aerr := <-answer
		if err := p.wait(t); err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
		c.Close()
		out := runCmdEnv(t, env, "state", "show", "-config", cfgPath)
		recorded := strings.Contains(out, fmt.Sprintf("test-chain  %d ", h))
		switch {
		case aerr == nil:
			inFlight++
			if !ed25519.Verify(pub, voteBytes(t, v), got.Signature) {
				t.Fatal("the in-flight signature does not verify")
			}
			if !recorded {
				t.Fatalf("height %d was answered but the state does not hold it:\n%s", h, out)
			}
		case recorded:
			// The guard records a height before the backend signs, so a
			// sign that then fails (a bcrypt starved past the sign
			// timeout on a loaded machine) leaves it recorded and is
			// answered with the failure. What SIGTERM must not do is cut
			// a recorded sign off unanswered.
			var re *privvaltest.RemoteSignerError
			if !errors.As(aerr, &re) {
				t.Fatalf("height %d is in the state but its sign was cut off unanswered (%v)", h, aerr)
			}
		}
		if !strings.Contains(p.log.String(), "stopped") {
			t.Fatalf("no clean stop logged")
		}
	}
	if inFlight == 0 {
		t.Fatal("SIGTERM never caught a sign in flight")
	}
}

// TestSIGHUPReloadsAllowlist: a node whose identity is not allowed is
// refused; once the config lists it and SIGHUP is sent, it is served.
func TestSIGHUPReloadsAllowlist(t *testing.T) {
	t.Parallel()
	ln := listener(t, "tcp")
	nodeKey := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{0x33}, 32))
	nodePub := nodeKey.Public().(ed25519.PublicKey)
	dir := t.TempDir()
	idPub := writeKey(t, filepath.Join(dir, "identity.pem"), 0x44)
	writeKey(t, filepath.Join(dir, "k.pem"), 0x55)
	ln.Handshake = privval.SecretConnection(nodeKey, []ed25519.PublicKey{idPub})
	cfgPath := filepath.Join(dir, "signerkit.toml")
	other := strings.Repeat("ab", 32)
	writeConfig(t, cfgPath, dir, "cometbft-v0.34", "inprocess:file="+filepath.Join(dir, "k.pem"), "tcp://"+ln.Address(), fmt.Sprintf("  allow = [%q]", other))
	if err := os.Mkdir(filepath.Join(dir, "state"), 0o700); err != nil {
		t.Fatal(err)
	}
	runCmd(t, "state", "init", "-config", cfgPath, "-height", "1")
	p := startProc(t, "start", "-config", cfgPath)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := accept(t, ln)
	if err := c.Ping(ctx); err == nil {
		t.Fatal("a node not on the allowlist was served")
	}
	c.Close()
	for !strings.Contains(p.log.String(), fmt.Sprintf("not on the allowlist\" chain=test-chain validator=tcp://%s peer=ed25519:%x", ln.Address(), []byte(nodePub))) {
		if ctx.Err() != nil {
			t.Fatal("the refused node's key is not logged")
		}
		time.Sleep(10 * time.Millisecond)
	}
	writeConfig(t, cfgPath, dir, "cometbft-v0.34", "inprocess:file="+filepath.Join(dir, "k.pem"), "tcp://"+ln.Address(), fmt.Sprintf("  allow = [%q]", fmt.Sprintf("%x", []byte(nodePub))))
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for {
		if ctx.Err() != nil {
			t.Fatal("never served after SIGHUP")
		}
		if !strings.Contains(p.log.String(), "reload: allowlist applied") {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		c := accept(t, ln)
		err := c.Ping(ctx)
		if err == nil {
			v := prevote(1, []byte{1})
			got, err := c.SignVote(ctx, "test-chain", v)
			if err != nil || !ed25519.Verify(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{0x55}, 32)).Public().(ed25519.PublicKey), voteBytes(t, v), got.Signature) {
				t.Fatalf("sign after reload: %v", err)
			}
			c.Close()
			break
		}
		c.Close()
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.wait(t); err != nil {
		t.Fatalf("exit: %v", err)
	}
}

// TestSIGKILLNeverDoubleSigns: the signer is killed with SIGKILL at random
// points while a node streams prevotes, each attempt at a height carrying
// a new block id (so a second signature at a height would be a double
// sign), then restarted on the same state. No height gets two signatures,
// and every signature answered is in the state.
func TestSIGKILLNeverDoubleSigns(t *testing.T) {
	// Not in parallel: its kills land 5 to 45 ms into a run (after its
	// first few answers), and a signer starved of CPU by the other tests
	// would be killed at fewer points within a sign.
	ln := listener(t, "unix")
	dir, cfgPath := setup(t, "cometbft-v0.34", "inprocess:file=k.pem", "unix://"+ln.Address(), "")
	pub := writeKey(t, filepath.Join(dir, "k.pem"), 9)
	writeConfig(t, cfgPath, dir, "cometbft-v0.34", "inprocess:file="+filepath.Join(dir, "k.pem"), "unix://"+ln.Address(), "")
	signed := map[int64][]byte{} // height → the sign bytes signed there
	var answered int64           // the highest height answered
	h := int64(1)
	refusals := 0
	for run := 0; run < 8; run++ {
		p := startProc(t, "start", "-config", cfgPath)
		c := accept(t, ln)
		// The kill lands 5 to 45 ms after this run's first answers:
		// none on runs 0 and 4 (the kill may then come before the first
		// sign, or during it), 1, 2 or 3 on the others. Counting answers,
		// not time alone, keeps the test signing enough heights however
		// slowly a loaded machine runs the signer: at least 12 over the
		// 8 runs.
		waitAnswers := run % 4
		n, _ := rand.Int(rand.Reader, big.NewInt(40))
		killAfter := time.Duration(n.Int64()+5) * time.Millisecond
		killed := make(chan struct{})
		var timer *time.Timer
		arm := func() {
			timer = time.AfterFunc(killAfter, func() {
				_ = p.cmd.Process.Kill()
				close(killed)
			})
		}
		if waitAnswers == 0 {
			arm()
		}
		answers := 0
		for {
			tag := make([]byte, 8)
			_, _ = rand.Read(tag)
			v := prevote(h, tag)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			got, err := c.SignVote(ctx, "test-chain", v)
			cancel()
			if err != nil {
				var rse *privvaltest.RemoteSignerError
				if errors.As(err, &rse) {
					if rse.Code != privval.CodeDoubleSign || signed[h] == nil {
						t.Fatalf("height %d refused: %v", h, err)
					}
					refusals++
					h++ // signed before the kill: the node moves on
					continue
				}
				break // the connection died with the process
			}
			sb := voteBytes(t, v)
			if !ed25519.Verify(pub, sb, got.Signature) {
				t.Fatalf("height %d: signature does not verify", h)
			}
			if old := signed[h]; old != nil && !bytes.Equal(old, sb) {
				t.Fatalf("DOUBLE SIGN at height %d", h)
			}
			signed[h] = sb
			answered = max(answered, h)
			h++
			if answers++; answers == waitAnswers {
				arm()
			}
		}
		if timer == nil {
			t.Fatalf("run %d: the connection died after %d answers, before the kill", run, answers)
		}
		<-killed
		_ = p.wait(t)
		c.Close()
		out := runCmd(t, "state", "show", "-config", cfgPath)
		height := stateHeight(t, out)
		if height < answered {
			t.Fatalf("the state is at %d but height %d was answered:\n%s", height, answered, out)
		}
		// The node's next attempt is at the height the kill cut short,
		// with a new block id: refused if that height was signed.
		if height > answered {
			signed[height] = []byte("signed, answer lost")
		}
	}
	t.Logf("%d heights answered over 8 SIGKILLs, %d re-requests refused", answered, refusals)
	if answered < 8 {
		t.Fatalf("only %d heights signed", answered)
	}
}

func stateHeight(t *testing.T, out string) int64 {
	t.Helper()
	s := bufio.NewScanner(strings.NewReader(out))
	for s.Scan() {
		f := strings.Fields(s.Text())
		if len(f) >= 2 && f[0] == "test-chain" {
			h, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return h
		}
	}
	t.Fatalf("no state in:\n%s", out)
	return 0
}

var _ = io.Discard
