//go:build unix

package inprocess_test

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/signer"
)

// TestKeyFileFIFO: a FIFO where the key file should be is refused at once
// as not a regular file; before, opening it blocked until a writer came.
func TestKeyFileFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "validator.pem")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := inprocess.LoadKeyFile(path)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, signer.ErrInvalidArgument) {
			t.Fatalf("LoadKeyFile of a FIFO: %v, want ErrInvalidArgument", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("LoadKeyFile of a FIFO is still blocked after a minute")
	}
}
