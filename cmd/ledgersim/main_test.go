package main

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/signerkit/signerkit/internal/proctest"
	"github.com/signerkit/signerkit/signer/signertrace"

	_ "github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/signbytes/signbytestest"
	"github.com/signerkit/signerkit/signer"
)

// TestMain removes the command proctest builds, once for all the tests.
func TestMain(m *testing.M) { os.Exit(proctest.Main(m)) }

// start builds the command, starts it with args and returns it with the
// address it printed.
func start(t *testing.T, args ...string) (*exec.Cmd, string) {
	t.Helper()
	return proctest.Start(t, "ledgersim", "127.0.0.1:", args...)
}

// stop sends SIGTERM and checks that the command exits 0.

var seed = func() []byte {
	b := make([]byte, ed25519.SeedSize)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}()

func TestSignThroughProcess(t *testing.T) {
	t.Parallel()
	cmd, addr := start(t, "-addr", "127.0.0.1:0", "-time", "accounted", "-seed", hex.EncodeToString(seed))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	pub := ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
	heights := signbytestest.NewHeights("", 1)
	// Twice: a second client connection replaces the first, as on Speculos.
	for range 2 {
		s, err := signer.Open(ctx, "ledger:speculos="+addr)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		msg := heights.Next(signbytestest.KindPrevote)
		sig, err := s.SignContext(ctx, msg)
		s.Close()
		if err != nil {
			t.Fatalf("Sign: %v", err)
		}
		if !ed25519.Verify(pub, msg, sig) {
			t.Fatal("signature does not verify under the seed's key")
		}
	}
	proctest.Stop(t, cmd)
}

// TestDeadlineThroughProcess: pointed at the process by a ledgersim: URI
// (ledgersim.SpeculosDialer), a sign under 300 ms of the Nano S Plus's
// 526 modeled ms fails with context.DeadlineExceeded, having accounted up to the
// deadline in the caller's trace, and under a minute it signs.
func TestDeadlineThroughProcess(t *testing.T) {
	t.Parallel()
	cmd, addr := start(t, "-addr", "127.0.0.1:0", "-time", "accounted", "-seed", hex.EncodeToString(seed))
	s, err := signer.Open(context.Background(), "ledgersim:speculos="+addr)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	heights := signbytestest.NewHeights("", 1)
	col := signertrace.NewCollector()
	ctx, cancel := context.WithTimeout(col.WithContext(context.Background()), 300*time.Millisecond)
	_, err = s.SignContext(ctx, heights.Next(signbytestest.KindPrevote))
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("sign under 300 ms: %v, want context.DeadlineExceeded", err)
	}
	var modeled time.Duration
	for _, st := range signertrace.Stages() {
		modeled += col.Summary().Stage(st).Modeled
	}
	if modeled <= 0 || modeled > 300*time.Millisecond {
		t.Errorf("%v modeled in the caller's trace, want some, up to the 300 ms deadline", modeled)
	}
	col = signertrace.NewCollector()
	ctx, cancel = context.WithTimeout(col.WithContext(context.Background()), time.Minute)
	defer cancel()
	msg := heights.Next(signbytestest.KindPrevote)
	sig, err := s.SignContext(ctx, msg)
	if err != nil || !ed25519.Verify(ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey), msg, sig) {
		t.Fatalf("sign under a minute: %v", err)
	}
	if got := col.Summary().Stage(signertrace.StageDevice).Modeled; got < 500*time.Millisecond {
		t.Errorf("device stage %v in the caller's trace, want the profile's 526 ms", got)
	}
	proctest.Stop(t, cmd)
}

func TestRejectAndUnplug(t *testing.T) {
	t.Parallel()
	cmd, addr := start(t, "-addr", "127.0.0.1:0", "-confirm", "reject")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := signer.Open(ctx, "ledger:speculos="+addr)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	if _, err := s.SignContext(ctx, signbytestest.NewHeights("", 1).Next(signbytestest.KindPrevote)); err == nil {
		t.Fatal("sign confirmed, want the user's rejection")
	}
	proctest.Stop(t, cmd)

	cmd, addr = start(t, "-addr", "127.0.0.1:0", "-fault", "unplug")
	if s, err := signer.Open(ctx, "ledger:speculos="+addr); err == nil {
		s.Close()
		t.Fatal("Open on a device unplugged at its first APDU succeeded")
	} else if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Open: %v, want a quick failure", err)
	}
	// SIGHUP plugs it back in.
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for {
		s, err := signer.Open(ctx, "ledger:speculos="+addr)
		if err == nil {
			s.Close()
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("Open after SIGHUP: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	proctest.Stop(t, cmd)
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-profile", "nanox"},
		{"-time", "fast"},
		{"-seed", "abcd"},
		{"-confirm", "maybe"},
		{"-fault", "melt"},
		{"-fault", "garbled"},
		{"extra"},
	} {
		var out, errb strings.Builder
		if err := run(context.Background(), args, &out, &errb, nil); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}
