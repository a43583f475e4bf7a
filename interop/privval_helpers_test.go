package interop

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/signerkit/signerkit/guard"
	spv "github.com/signerkit/signerkit/privval"
	"github.com/signerkit/signerkit/signer"
)

const pvChain = "interop-privval"

// pvListen listens on network ("unix" or "tcp") and returns the listener
// and the address to give to our endpoint.
func pvListen(t *testing.T, network string) net.Listener {
	t.Helper()
	addr := "127.0.0.1:0"
	if network == "unix" {
		dir, err := os.MkdirTemp("", "pvi")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.RemoveAll(dir) })
		addr = filepath.Join(dir, "s")
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	return ln
}

// pvGuard returns a guard with its state on disk around k.
func pvGuard(t *testing.T, k *edKey) *guard.Guard {
	t.Helper()
	g, err := guard.New(k, guard.Config{Dir: t.TempDir(), AutoInit: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	return g
}

// pvRun starts our endpoint dialing network/addr and stops it at cleanup.
// Each opt, if any, edits the Config first (a Handshake, hooks).
func pvRun(t *testing.T, g *guard.Guard, d spv.Dialect, network, addr string, opts ...func(*spv.Config)) *spv.Endpoint {
	t.Helper()
	cfg := spv.Config{Dialect: d, Network: network, Address: addr, ChainID: pvChain,
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 200 * time.Millisecond}
	for _, o := range opts {
		o(&cfg)
	}
	e, err := spv.NewEndpoint(g, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Run did not return")
		}
	})
	return e
}

// pvServe starts our native server on ln and stops it at cleanup. Each
// opt, if any, edits the ServerConfig first.
func pvServe(t *testing.T, g *guard.Guard, ln net.Listener, opts ...func(*spv.ServerConfig)) *spv.Server {
	t.Helper()
	cfg := spv.ServerConfig{ChainID: pvChain}
	for _, o := range opts {
		o(&cfg)
	}
	s, err := spv.NewServer(g, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return")
		}
	})
	return s
}

// pvIdentity is a SecretConnection identity key (a signer's or a node's),
// distinct from the validator key.
func pvIdentity(seed byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, 32))
}

// pvPub is priv's public key.
func pvPub(priv ed25519.PrivateKey) ed25519.PublicKey { return priv.Public().(ed25519.PublicKey) }

// disconnects records the errors an Endpoint or Server reports to
// OnDisconnect.
type disconnects struct {
	mu   sync.Mutex
	errs []error
}

func (d *disconnects) add(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.errs = append(d.errs, err)
}

// wait waits up to 10 s for n errors that match, and returns the last.
func (d *disconnects) wait(t *testing.T, n int, match func(error) bool) error {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		d.mu.Lock()
		var got []error
		for _, err := range d.errs {
			if match(err) {
				got = append(got, err)
			}
		}
		all := slices.Clone(d.errs)
		d.mu.Unlock()
		if len(got) >= n {
			return got[len(got)-1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("wanted %d matching disconnects, got %v", n, all)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// unauthorized matches a handshake refused by our allowlist.
func unauthorized(key ed25519.PublicKey) func(error) bool {
	return func(err error) bool {
		var ue *spv.UnauthorizedPeerError
		return errors.As(err, &ue) && ue.Key.Equal(key) && errors.Is(err, signer.ErrPermissionDenied)
	}
}

// peerChecker returns an OnRequest hook that fails t if a request comes
// from any identity other than want.
func peerChecker(t *testing.T, want ed25519.PublicKey) func(spv.RequestInfo) {
	return func(info spv.RequestInfo) {
		if !want.Equal(info.Peer) {
			t.Errorf("%s request from peer %x, want %x", info.Label, info.Peer, want)
		}
	}
}
