package interop

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/signerkit/signerkit/guard"
	spv "github.com/signerkit/signerkit/privval"
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
func pvRun(t *testing.T, g *guard.Guard, d spv.Dialect, network, addr string) *spv.Endpoint {
	t.Helper()
	e, err := spv.NewEndpoint(g, spv.Config{Dialect: d, Network: network, Address: addr, ChainID: pvChain,
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 200 * time.Millisecond})
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

// pvServe starts our native server on ln and stops it at cleanup.
func pvServe(t *testing.T, g *guard.Guard, ln net.Listener) *spv.Server {
	t.Helper()
	s, err := spv.NewServer(g, spv.ServerConfig{ChainID: pvChain})
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
