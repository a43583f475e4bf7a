//go:build unix

package signer_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/signerkit/signerkit/signer"
)

// testSecretFileUnix: the mode and owner checks, and FIFOs.
func testSecretFileUnix(t *testing.T, write func(name string, b []byte, mode os.FileMode) string) {
	const pin = "Zq7-pin"
	dir := filepath.Dir(write("probe", nil, 0o600))
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o660, 0o602, 0o620, 0o601, 0o666} {
		p := write("mode", []byte(pin), mode)
		got, err := signer.SecretFile(p)()
		if !errors.Is(err, signer.ErrPermissionDenied) || got != nil {
			t.Errorf("mode %04o: %q, %v; want ErrPermissionDenied", mode, got, err)
		} else if strings.Contains(err.Error(), pin) || !strings.Contains(err.Error(), "0600") {
			t.Errorf("mode %04o: error %q should say what to do and not quote the file", mode, err)
		}
	}
	if err := os.Symlink(write("open", []byte(pin), 0o644), filepath.Join(dir, "link-open")); err != nil {
		t.Fatal(err)
	}
	if _, err := signer.SecretFile(filepath.Join(dir, "link-open"))(); !errors.Is(err, signer.ErrPermissionDenied) {
		t.Errorf("link to a 0644 file: %v, want ErrPermissionDenied", err)
	}
	// A FIFO is refused at once rather than read (it would block until a
	// writer came).
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := signer.SecretFile(fifo)(); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("a FIFO: %v, want ErrInvalidArgument", err)
	}
	// A file owned by another user (neither us nor root).
	other := write("other", []byte(pin), 0o600)
	if err := os.Chown(other, 12345, 12345); err != nil {
		t.Logf("cannot give a file to another user here (%v): ownership not tested", err)
		return
	}
	if _, err := signer.SecretFile(other)(); !errors.Is(err, signer.ErrPermissionDenied) {
		t.Errorf("a file owned by uid 12345: %v, want ErrPermissionDenied", err)
	}
}
