package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// startLedgerKey runs cmd/ledgersim (ledgersimProcess), a simulated
// Ledger that serves one client at a time on its Speculos port as
// Speculos does, with a fresh key, and returns its address and the app's
// public key.
func startLedgerKey(t *testing.T) (addr string, pub ed25519.PublicKey) {
	t.Helper()
	seed := make([]byte, ed25519.SeedSize)
	_, _ = rand.Read(seed)
	addr = ledgersimProcess(t, "-seed", hex.EncodeToString(seed), "-time", "accounted")
	return addr, ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
}

// TestCommandsBesideRunningDaemon: a daemon signs a prevote at every
// height with a simulated Ledger, which serves one client, while keys
// show, keys list and state show run beside it 100 times. Before, keys
// show opened the device and took it from the daemon, and a vote was
// lost. Now each command reads the state directory instead: no sign
// fails, and state show prints the live state.
func TestCommandsBesideRunningDaemon(t *testing.T) {
	addr, pub := startLedgerKey(t)
	ln := listener(t, "unix")
	_, cfgPath := setup(t, "cometbft-v0.34", "ledgersim:speculos="+addr, "unix://"+ln.Address(), "")
	p := startProc(t, "start", "-config", cfgPath)
	c := accept(t, ln)
	defer c.Close()

	var answered atomic.Int64 // the highest height answered
	var signErr atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for h := int64(1); ; h++ {
			select {
			case <-stop:
				return
			default:
			}
			tag := make([]byte, 8)
			_, _ = rand.Read(tag)
			v := prevote(h, tag)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			got, err := c.SignVote(ctx, "test-chain", v)
			cancel()
			if err != nil {
				signErr.Store(fmt.Errorf("height %d: %w", h, err))
				return
			}
			if !ed25519.Verify(pub, voteBytes(t, v), got.Signature) {
				signErr.Store(fmt.Errorf("height %d: the signature does not verify", h))
				return
			}
			answered.Store(h)
		}
	})
	waitHeights := func(n int64) {
		deadline := time.Now().Add(20 * time.Second)
		for answered.Load() < n && signErr.Load() == nil && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitHeights(3)
	cmds := [][]string{
		{"keys", "show", "-config", cfgPath},
		{"keys", "list", "-config", cfgPath},
		{"state", "show", "-config", cfgPath},
	}
	pubHex := fmt.Sprintf("%x", []byte(pub)) // keys show and list print it, in either case
	for i := range 100 {
		if err := signErr.Load(); err != nil {
			break
		}
		args := cmds[i%len(cmds)]
		before := answered.Load()
		out, err := command(t, nil, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("run %d: signerkit %s: %v\n%s", i, strings.Join(args, " "), err, out)
		}
		switch args[0] {
		case "keys":
			if !strings.Contains(strings.ToLower(string(out)), pubHex) || !strings.Contains(string(out), "no device opened") {
				t.Fatalf("run %d: keys %s beside the daemon:\n%s", i, args[1], out)
			}
		case "state":
			// The live state: at least the height answered before the
			// command started (the guard syncs before it answers).
			if h := stateHeight(t, string(out)); h < before || !strings.Contains(string(out), "a daemon is running") {
				t.Fatalf("run %d: state show printed height %d, %d was answered before it ran:\n%s", i, h, before, out)
			}
		}
	}
	close(stop)
	wg.Wait()
	if err := signErr.Load(); err != nil {
		t.Fatalf("a sign failed while the commands ran beside the daemon: %v\ndaemon log:\n%s", err, p.log)
	}
	// The commands that change the state are refused while it runs.
	out, err := command(t, nil, "state", "init", "-config", cfgPath, "-height", "1000").CombinedOutput()
	if err == nil || !strings.Contains(string(out), fmt.Sprintf("another signerkit process (pid %d) holds the state directory", p.cmd.Process.Pid)) || !strings.Contains(string(out), "stop it first") {
		t.Fatalf("state init beside the daemon: %v\n%s", err, out)
	}
	// So is a second daemon, before it opens the device: the first one
	// keeps signing.
	out, err = command(t, nil, "start", "-config", cfgPath).CombinedOutput()
	if err == nil || !strings.Contains(string(out), fmt.Sprintf("another signerkit process (pid %d)", p.cmd.Process.Pid)) {
		t.Fatalf("a second start: %v\n%s", err, out)
	}
	h := answered.Load() + 1
	v := prevote(h, []byte{0xAB})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if got, err := c.SignVote(ctx, "test-chain", v); err != nil || !ed25519.Verify(pub, voteBytes(t, v), got.Signature) {
		t.Fatalf("height %d after the second start was refused: %v", h, err)
	}
	t.Logf("%d heights signed while 100 commands ran beside the daemon", answered.Load())
}
