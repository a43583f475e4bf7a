//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package keybase

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signer"
)

// A FIFO named like a key file, or in the lock file's place, makes the
// store's reads and writes fail at once: opened for reading, a FIFO would
// block until a writer came.
func TestStoreFIFO(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	if _, err := s.GenerateKey(ctx, signer.Ed25519, "good"); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(s.Dir(), "x.key"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Each call runs with a deadline, in a goroutine the test gives up
	// on: a call that blocks fails the test rather than hanging it.
	run := func(what string, f func(ctx context.Context) error, problem FileProblem) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- f(ctx) }()
		select {
		case err := <-done:
			// A call that waited on the FIFO would end at the deadline
			// with the context's error, not this *FileError.
			wantFileError(t, what, err, problem, signer.ErrCorrupt)
		case <-time.After(5 * time.Second):
			t.Errorf("%s: still blocked after 5 s", what)
		}
	}
	run("ListKeys", func(ctx context.Context) error {
		keys, err := s.ListKeys(ctx)
		if len(keys) != 1 || keys[0].Label != "good" {
			t.Errorf("ListKeys = %v, want good", keys)
		}
		return err
	}, FileNotRegular)
	run("KeyInfo", func(ctx context.Context) error { _, err := s.KeyInfo(ctx, "x"); return err }, FileNotRegular)
	run("OpenKey", func(ctx context.Context) error {
		_, err := s.OpenKey(ctx, signer.KeyRef{Label: "x"})
		return err
	}, FileNotRegular)
	run("Open", func(ctx context.Context) error {
		_, err := Open(ctx, Config{Dir: s.Dir(), Secret: pw, Key: signer.KeyRef{Label: "x"}})
		return err
	}, FileNotRegular)
	run("ExportArmor", func(ctx context.Context) error { _, err := s.ExportArmor(ctx, "x"); return err }, FileNotRegular)

	// The lock file a FIFO.
	lock := filepath.Join(s.Dir(), lockName)
	if err := syscall.Unlink(lock); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(lock, 0o600); err != nil {
		t.Fatal(err)
	}
	run("GenerateKey", func(ctx context.Context) error {
		_, err := s.GenerateKey(ctx, signer.Ed25519, "k")
		return err
	}, FileNotRegular)
}
