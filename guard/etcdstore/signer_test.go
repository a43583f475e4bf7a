package etcdstore_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/signerkit/signerkit/daemon"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

// TestMain runs this test binary as a signer process when asked (see
// signerMain), else the tests.
func TestMain(m *testing.M) {
	if os.Getenv("SK_ETCD_SIGNER") == "1" {
		os.Exit(signerMain())
	}
	os.Exit(m.Run())
}

// checkerChain is the chain the checker's signers sign for.
const checkerChain = "checker"

// signerConfig is the daemon configuration of a checker's signer: the
// shared key's chain on state (etcd), tm2-remote on the unix socket sock,
// each sign within deadline.
func signerConfig(stateDir, state, sock string, deadline time.Duration) *daemon.Config {
	return &daemon.Config{StateDir: stateDir, State: state, ShutdownGrace: time.Second, Chains: []daemon.ChainConfig{{
		ID: checkerChain, Protocol: daemon.ProtocolTM2Remote, Key: "fake:42", SignTimeout: deadline,
		Validators: []daemon.ValidatorConfig{{Addr: "unix://" + sock}},
	}}}
}

// signerMain is a signer process of the checker: a signerkit daemon
// (daemon.New, its privval server, guard and shared state) with state
// SK_STATE (etcd through this signer's own proxies), state directory
// SK_DIR and the shared key (signertest.NewFake(42)), serving tm2-remote
// on the unix socket SK_SOCK, each sign within SK_DEADLINE. It prints
// "ready" once the socket listens, and runs until killed.
func signerMain() int {
	deadline, _ := time.ParseDuration(os.Getenv("SK_DEADLINE"))
	cfg := signerConfig(os.Getenv("SK_DIR"), os.Getenv("SK_STATE"), os.Getenv("SK_SOCK"), deadline)
	open := func(context.Context, string) (signer.Signer, error) { return signertest.NewFake(42), nil }
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	d, err := daemon.New(context.Background(), cfg, daemon.Options{Open: open, Logger: log})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Println("ready")
	if err := d.Run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 0
}

// socketIn returns a fresh unix socket path in dir.
func socketIn(dir string) string {
	d, err := os.MkdirTemp(dir, "s")
	if err != nil {
		panic(err)
	}
	return filepath.Join(d, "s")
}
