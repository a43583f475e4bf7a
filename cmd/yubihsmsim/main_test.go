package main

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"github.com/signerkit/signerkit/internal/proctest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/yubihsm"
	"github.com/signerkit/signerkit/yubihsm/yubihsmsim"
)

// TestMain removes the command proctest builds, once for all the tests.
func TestMain(m *testing.M) { os.Exit(proctest.Main(m)) }

// start builds the command, starts it with args and returns it with the
// address it printed.
func start(t *testing.T, args ...string) (*exec.Cmd, string) {
	t.Helper()
	return proctest.Start(t, "yubihsmsim", "http://127.0.0.1:", args...)
}

// stop sends SIGTERM and checks that the command exits 0.

func TestSignThroughProcess(t *testing.T) {
	t.Parallel()
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = byte(i)
	}
	cmd, url := start(t, "-addr", "127.0.0.1:0", "-profile", "none", "-time", "accounted",
		"-password", "s3cret", "-seed", hex.EncodeToString(seed), "-key-id", "0x0064", "-label", "validator")

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, ref := range []string{"label=validator", "id=0064"} {
		s, err := signer.Open(ctx, "yubihsm:connector="+url+";"+ref+"?pin-value=s3cret&keep-alive=off")
		if err != nil {
			t.Fatalf("%s: Open: %v", ref, err)
		}
		msg := []byte("vote sign bytes")
		sig, err := s.SignContext(ctx, msg)
		s.Close()
		if err != nil {
			t.Fatalf("%s: Sign: %v", ref, err)
		}
		if !ed25519.Verify(ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey), msg, sig) {
			t.Fatalf("%s: signature does not verify under the seed's key", ref)
		}
	}
	// The factory password is replaced, not added.
	if s, err := signer.Open(ctx, "yubihsm:connector="+url+";label=validator?pin-value=password&keep-alive=off"); !errors.Is(err, signer.ErrWrongPassphrase) {
		if s != nil {
			s.Close()
		}
		t.Fatalf("Open with the factory password: %v, want ErrWrongPassphrase", err)
	}
	proctest.Stop(t, cmd)
}

// TestDeadlineThroughProcess: in accounted mode the process honours the
// deadline that yubihsmsim.HTTPClient sends: a 1024-byte message, 353 ms of
// modeled time on the yubihsm2 profile, fails under a 300 ms deadline with
// context.DeadlineExceeded and succeeds under a longer one.
func TestDeadlineThroughProcess(t *testing.T) {
	t.Parallel()
	cmd, url := start(t, "-addr", "127.0.0.1:0", "-profile", "yubihsm2", "-time", "accounted", "-seed", strings.Repeat("22", 32))
	k, err := yubihsm.Open(context.Background(), yubihsm.Config{Connector: url, Secret: signer.SecretBytes([]byte("password")),
		Key: signer.KeyRef{Label: "validator"}, KeepAlive: -1, HTTPClient: yubihsmsim.HTTPClient()})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	msg := make([]byte, 1024)
	pub := ed25519.NewKeyFromSeed(bytesOf(0x22)).Public().(ed25519.PublicKey)
	sig, err := k.SignContext(context.Background(), msg) // opens the session
	if err != nil || !ed25519.Verify(pub, msg, sig) {
		t.Fatalf("sign: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = k.SignContext(ctx, msg)
	var de *yubihsm.DeadlineError
	if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &de) {
		t.Fatalf("a 353 ms sign under 300 ms: %v, want a *yubihsm.DeadlineError wrapping context.DeadlineExceeded", err)
	}
	if de.Modeled != 353*time.Millisecond || de.Accounted > 300*time.Millisecond {
		t.Errorf("modeled %v, accounted %v", de.Modeled, de.Accounted)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if sig, err := k.SignContext(ctx, msg); err != nil || !ed25519.Verify(pub, msg, sig) {
		t.Fatalf("the same sign under 20 s: %v", err)
	}
	k.Close()
	proctest.Stop(t, cmd)
}

func bytesOf(b byte) []byte {
	out := make([]byte, ed25519.SeedSize)
	for i := range out {
		out[i] = b
	}
	return out
}

func TestFaultAtStart(t *testing.T) {
	t.Parallel()
	cmd, url := start(t, "-addr", "127.0.0.1:0", "-profile", "none", "-seed", strings.Repeat("11", 32), "-fault", "small-order-key")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := signer.Open(ctx, "yubihsm:connector="+url+";label=validator?pin-value=password&keep-alive=off")
	if err == nil {
		s.Close()
	}
	if !errors.Is(err, signer.ErrInvalidKey) {
		t.Fatalf("Open with a small-order key presented: %v, want ErrInvalidKey", err)
	}
	proctest.Stop(t, cmd)
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-profile", "hsm3"},
		{"-time", "fast"},
		{"-seed", "abcd"},
		{"-key-id", "zz"},
		{"-fault", "melt"},
		{"-fault", "garble=0"},
		{"extra"},
	} {
		var out, errb strings.Builder
		if err := run(context.Background(), args, &out, &errb); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}
