package main

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/signerkit/signerkit/internal/proctest"
	"github.com/signerkit/signerkit/privval"
	"github.com/signerkit/signerkit/privval/privvaltest"
	"github.com/signerkit/signerkit/signbytes"
)

// ledgersimProcess runs cmd/ledgersim as a process with args and returns
// the address it serves the Speculos protocol on.
func ledgersimProcess(t *testing.T, args ...string) string {
	t.Helper()
	_, addr := proctest.StartPackage(t, "github.com/signerkit/signerkit/cmd/ledgersim", "ledgersim", "",
		append([]string{"-addr", "127.0.0.1:0"}, args...)...)
	return addr
}

// inflightMetricsURL waits for the metrics URL in p's log.
func inflightMetricsURL(t *testing.T, p *proc) string {
	t.Helper()
	re := regexp.MustCompile(`url=(http://\S+/metrics)`)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if m := re.FindStringSubmatch(p.log.String()); m != nil {
			return m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no metrics URL logged:\n%s", p.log)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSIGKILLDuringLedgerSign: the daemon signs with cmd/ledgersim as its
// Ledger (a Speculos port, the device's time slept: ~0.5 s a sign) for a
// gno validator. It is killed with SIGKILL while the device signs a
// prevote: the device has moved its own state, the answer is lost. Started
// again on the same state, and asked for the same prevote, the device
// refuses it (0x6985); the daemon logs at ERROR that the device signed it
// before the daemon was killed and that the signature is lost, and counts
// signerkit_device_refused_inflight_total. (A kill that lands before the
// device received the prevote leaves nothing lost: the prevote is then
// signed after the restart, and the test tries the next height.)
func TestSIGKILLDuringLedgerSign(t *testing.T) {
	if testing.Short() {
		t.Skip("runs cmd/ledgersim and signerkit as processes, with the device's time slept")
	}
	t.Parallel()
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = byte(0x70 + i)
	}
	pub := ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
	simAddr := ledgersimProcess(t, "-seed", hex.EncodeToString(seed), "-time", "realtime")

	ln, err := privvaltest.NewListener("unix", privval.GnoTMKMS)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "signerkit.toml")
	cfg := fmt.Sprintf(`state_dir = %q
metrics_addr = "127.0.0.1:0"
shutdown_grace = "20s"
log_level = "debug"

[[chain]]
id = "test-chain"
protocol = "tm2-tmkms"
key = "ledger:speculos=%s"
sign_timeout = "10s"

  [[chain.validator]]
  addr = "unix://%s"
`, filepath.Join(dir, "state"), simAddr, ln.Address())
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "state"), 0o700); err != nil {
		t.Fatal(err)
	}
	runCmd(t, "state", "init", "-config", cfgPath, "-height", "1")

	sign := func(c *privvaltest.Client, v *privvaltest.Vote) error {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		got, err := c.SignVote(ctx, "test-chain", v)
		if err == nil {
			sb, berr := signbytes.Message{Format: signbytes.TM2, Phase: v.Phase, ChainID: "test-chain", Height: v.Height, BlockID: v.BlockID, Timestamp: got.Timestamp}.Bytes()
			if berr != nil || !ed25519.Verify(pub, sb, got.Signature) {
				return fmt.Errorf("%w: height %d: the signature does not verify (%v)", errInflightBadSig, v.Height, berr)
			}
		}
		return err
	}
	p := startProc(t, "start", "-config", cfgPath)
	c := accept(t, ln)
	if err := sign(c, prevote(1, []byte{1})); err != nil {
		t.Fatalf("height 1: %v", err)
	}
	for h := int64(2); ; h++ {
		if h > 6 {
			t.Fatal("no kill landed while the device signed, in 5 tries")
		}
		v := prevote(h, []byte{byte(h)})
		answer := make(chan error, 1)
		go func() { answer <- sign(c, v) }()
		// The device signs at once and then takes ~0.5 s to answer; the
		// kill lands in between, unless the request was slow to reach it.
		time.Sleep(150 * time.Millisecond)
		_ = p.cmd.Process.Kill()
		if err := <-answer; err == nil || errors.Is(err, errInflightBadSig) {
			t.Fatalf("height %d, killed 150 ms into a 0.5 s sign: %v, want the connection cut", h, err)
		}
		_ = p.wait(t)
		c.Close()

		p = startProc(t, "start", "-config", cfgPath)
		c = accept(t, ln)
		url := inflightMetricsURL(t, p)
		err := sign(c, v)
		if err == nil {
			t.Logf("height %d: the kill came before the device signed; trying the next height", h)
			continue
		}
		var rse *privvaltest.RemoteSignerError
		if !errors.As(err, &rse) {
			t.Fatalf("height %d asked again after the restart: %v, want a RemoteSignerError", h, err)
		}
		want := fmt.Sprintf("the device refused prevote %d/0 of chain test-chain: it signed it in the previous run of the daemon, which was killed while that sign was in flight", h)
		// The log reaches the test through a pipe, maybe after the answer.
		var line string
		for deadline := time.Now().Add(10 * time.Second); line == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			for _, l := range strings.Split(p.log.String(), "\n") {
				if strings.Contains(l, want) {
					line = l
				}
			}
		}
		if !strings.Contains(line, "level=ERROR") || !strings.Contains(line, "the signature is lost") || !strings.Contains(line, "docs/daemon.md#a-crash-during-a-ledger-sign") {
			t.Fatalf("height %d: the device's refusal is not logged at ERROR as a sign lost to the kill; log:\n%s", h, p.log)
		}
		if got := inflightScrape(t, url, `signerkit_device_refused_inflight_total{chain="test-chain",phase="prevote"}`); got != "1" {
			t.Fatalf("signerkit_device_refused_inflight_total = %q, want 1", got)
		}
		// The validator moves on: the precommit signs.
		pc := *v
		pc.Phase = signbytes.Precommit
		if err := sign(c, &pc); err != nil {
			t.Fatalf("height %d precommit after the lost prevote: %v", h, err)
		}
		t.Logf("height %d: signed on the device, lost to SIGKILL, refused and reported after the restart", h)
		break
	}
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := p.wait(t); err != nil {
		t.Fatalf("exit: %v", err)
	}
}

var errInflightBadSig = errors.New("bad signature")

// inflightScrape returns the value of the sample series (name{labels}) at
// url, or "".
func inflightScrape(t *testing.T, url, series string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			return v
		}
	}
	return ""
}
