package yubihsm_test

import (
	"bytes"
	"context"
	"crypto"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/yubihsm"
	"github.com/signerkit/signerkit/yubihsm/yubihsmsim"
)

// TestSecret checks that Open calls Config.Secret once and wipes what it
// returns, and that a Secret that fails, or none, fails Open.
func TestSecret(t *testing.T) {
	_, url := sim(t, yubihsmsim.Config{})
	var given []byte
	calls := 0
	cfg := yubihsm.Config{Connector: url, Secret: func() ([]byte, error) {
		calls++
		given = []byte("password")
		return given, nil
	}}
	st := openStore(t, cfg)
	if calls != 1 || !bytes.Equal(given, make([]byte, len(given))) {
		t.Errorf("Secret called %d times, its slice left %q: want one call and a wiped slice", calls, given)
	}
	ki := generate(t, st, signer.Ed25519, "secret")
	cfg.Key = ki.Ref()
	k, err := yubihsm.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	signOK(t, k, "a Signer from Open with a Secret")
	k.Close()
	if calls != 2 || !bytes.Equal(given, make([]byte, len(given))) {
		t.Errorf("Open: Secret called %d times in all, its slice left %q", calls, given)
	}
	noTerminal := errors.New("no terminal")
	cfg.Secret = func() ([]byte, error) { return nil, noTerminal }
	if _, err := yubihsm.Open(context.Background(), cfg); !errors.Is(err, noTerminal) {
		t.Errorf("Open with a failing Secret: %v, want its error", err)
	}
	cfg.Secret = nil
	if _, err := yubihsm.Open(context.Background(), cfg); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("Open without a Secret: %v, want ErrInvalidArgument", err)
	}
}

func TestOpenErrors(t *testing.T) {
	dev, url := sim(t, yubihsmsim.Config{})
	ctx := context.Background()
	if _, err := yubihsm.OpenStore(ctx, yubihsm.Config{Connector: url}); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("no password: %v", err)
	}
	cfg := config(url)
	cfg.AuthKeyID = 9
	if _, err := yubihsm.OpenStore(ctx, cfg); !errors.Is(err, signer.ErrKeyNotFound) {
		t.Errorf("unknown auth key: %v", err)
	}
	dev.Inject(yubihsmsim.FaultUnplugged, 0)
	if _, err := yubihsm.OpenStore(ctx, config(url)); !errors.Is(err, signer.ErrDeviceNotFound) {
		t.Errorf("no device: %v", err)
	}
	dev.Clear(yubihsmsim.FaultUnplugged)
	if _, err := yubihsm.OpenStore(ctx, config("http://127.0.0.1:1")); !errors.Is(err, signer.ErrDeviceNotFound) {
		t.Errorf("no connector: %v", err)
	}
	for _, bad := range []string{"ftp://x", "http://user:hunter2@127.0.0.1:1", "http://127.0.0.1:1/?x=1", "http://"} {
		_, err := yubihsm.OpenStore(ctx, config(bad))
		if !errors.Is(err, signer.ErrInvalidArgument) || strings.Contains(fmt.Sprint(err), "hunter2") {
			t.Errorf("connector %s: %v, want ErrInvalidArgument without the password", bad, err)
		}
	}
	cfg = config(url)
	if _, err := yubihsm.Open(ctx, cfg); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("Open without Config.Key: %v, want ErrInvalidArgument", err)
	}
	cfg.Key = signer.KeyRef{Label: "absent"}
	if _, err := yubihsm.Open(ctx, cfg); !errors.Is(err, signer.ErrKeyNotFound) {
		t.Errorf("Open of an absent key: %v, want ErrKeyNotFound", err)
	}
	waitOpenSessions(t, dev, 0, "none: a failed Open releases its sessions")
}

// TestOpen opens a key in one step: the Store Open connects through
// closes at once, the Signer keeps the connection until its own Close.
func TestOpen(t *testing.T) {
	dev, url := sim(t, yubihsmsim.Config{})
	ki := generate(t, openStore(t, config(url)), signer.ECDSAP256, "one-step")
	for _, ref := range []signer.KeyRef{{Label: "one-step"}, {ID: ki.ID}, {ID: "0x" + ki.ID, Label: "one-step", Algorithm: signer.ECDSAP256}} {
		cfg := config(url)
		cfg.Key = ref
		k, err := yubihsm.Open(context.Background(), cfg)
		if err != nil {
			t.Fatalf("Open(%v): %v", ref, err)
		}
		if k.Algorithm() != signer.ECDSAP256 || k.Label() != "one-step" || fmt.Sprintf("%04x", k.ID()) != ki.ID ||
			!ki.Public.(interface{ Equal(crypto.PublicKey) bool }).Equal(k.Public()) {
			t.Fatalf("Open(%v) opened %v %q %04x %v, want the generated key", ref, k.Algorithm(), k.Label(), k.ID(), k.Public())
		}
		signOK(t, k, "a Signer from Open")
		k.Close()
		if _, err := k.SignContext(context.Background(), []byte("closed")); !errors.Is(err, signer.ErrClosed) {
			t.Errorf("sign after Close: %v, want ErrClosed", err)
		}
	}
	waitOpenSessions(t, dev, 1, "the first Store's; Open's Store and the Signer's are closed")
}
