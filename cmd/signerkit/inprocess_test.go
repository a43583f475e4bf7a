package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/signerkit/signerkit/daemon"
)

// TestInitHeight, in process: init without -height writes the config and
// identity but no double-sign state, so the daemon refuses to start with
// the command that makes it; -height 0 is refused before anything is
// written; -height H makes the state at H.
func TestInitHeight(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	if err := run([]string{"init", "-home", filepath.Join(dir, "zero"), "-height", "0"}, &out, &errb); !errors.Is(err, errUsage) ||
		!strings.Contains(errb.String(), "at least 1") {
		t.Fatalf("init -height 0: %v, %s", err, errb.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "zero")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("init -height 0 wrote %s: %v", filepath.Join(dir, "zero"), err)
	}

	home := filepath.Join(dir, "home")
	keyPath := filepath.Join(dir, "k.pem")
	writeKey(t, keyPath, 3)
	out.Reset()
	if err := run([]string{"init", "-home", home, "-chain", "c1", "-key", "inprocess:file=" + keyPath}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if ents, err := os.ReadDir(filepath.Join(home, "state")); err != nil || len(ents) != 0 {
		t.Fatalf("init without -height wrote state: %v, %v", ents, err)
	}
	cfg, err := daemon.LoadConfig(filepath.Join(home, "signerkit.toml"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := daemon.New(context.Background(), cfg, daemon.Options{})
	if err == nil {
		d.Close()
		t.Fatal("the daemon started on the state of an init without -height")
	}
	if !strings.Contains(err.Error(), "no double-sign state") || !strings.Contains(err.Error(), "signerkit state init") {
		t.Fatalf("New: %v", err)
	}

	home2 := filepath.Join(dir, "home2")
	if err := run([]string{"init", "-home", home2, "-chain", "c1", "-height", "42", "-key", "inprocess:file=" + keyPath}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	cfg2, err := daemon.LoadConfig(filepath.Join(home2, "signerkit.toml"))
	if err != nil {
		t.Fatal(err)
	}
	st, _, err := daemon.ShowState(context.Background(), cfg2)
	if err != nil || len(st) != 1 || st[0].Err != nil || st[0].Height != 42 {
		t.Fatalf("state after init -height 42: %+v, %v", st, err)
	}
}

// TestServeEnds, in process: serve returns when its context ends and
// leaves no goroutine behind, its signal goroutine included.
func TestServeEnds(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "signerkit.toml")
	writeConfig(t, cfgPath, dir, "cometbft-v0.34", "inprocess:file="+filepath.Join(dir, "k.pem"), "unix://"+filepath.Join(dir, "nobody.sock"), "")
	writeKey(t, filepath.Join(dir, "k.pem"), 4)
	if err := os.Mkdir(filepath.Join(dir, "state"), 0o700); err != nil {
		t.Fatal(err)
	}
	cfg, err := daemon.LoadConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := daemon.InitState(context.Background(), cfg.StateDir, "test-chain", 1); err != nil {
		t.Fatal(err)
	}
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	log := slog.New(slog.DiscardHandler)
	for range 3 {
		ctx, cancel := context.WithCancel(context.Background())
		started := make(chan struct{})
		done := make(chan error, 1)
		go func() {
			done <- serve(ctx, cfg, daemon.Options{Logger: log}, log, func(*daemon.Daemon) { close(started) })
		}()
		select {
		case <-started:
		case err := <-done:
			cancel()
			t.Fatalf("serve: %v", err)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("serve: %v", err)
		}
	}
}
