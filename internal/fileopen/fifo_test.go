//go:build unix

package fileopen

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A FIFO is refused at once instead of blocking the open until the other
// end comes.
func TestOpenFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, links := range []Links{Follow, NoFollow} {
		var nr *NotRegularError
		if _, _, err := Open(fifo, os.O_RDONLY, 0, links); !errors.As(err, &nr) || nr.Mode&fs.ModeNamedPipe == 0 {
			t.Errorf("reading a FIFO: %v, want *NotRegularError", err)
		}
	}
	// For writing (as keybase opens its lock file) it fails too: ENXIO
	// without a reader, or not a regular file.
	for _, flag := range []int{os.O_WRONLY, os.O_RDWR | os.O_CREATE} {
		if _, _, err := Open(fifo, flag, 0o600, NoFollow); err == nil {
			t.Errorf("a FIFO opened with flag %#x", flag)
		}
	}
}

// ReadFile names the path in its errors, refuses a FIFO at once, and
// reads one byte past limit so the caller sees a file too large.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	var nr *NotRegularError
	if _, err := ReadFile(fifo, 10); !errors.As(err, &nr) || !strings.Contains(err.Error(), fifo) {
		t.Errorf("a FIFO: %v, want a *NotRegularError naming the path", err)
	}
	missing := filepath.Join(dir, "none")
	if _, err := ReadFile(missing, 10); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("a missing file: %v", err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, []byte("0123456789abcdef"), 0o600); err != nil {
		t.Fatal(err)
	}
	for limit, want := range map[int64]string{4: "01234", 16: "0123456789abcdef", 100: "0123456789abcdef"} {
		if b, err := ReadFile(big, limit); err != nil || string(b) != want {
			t.Errorf("ReadFile(limit %d) = %q, %v; want %q", limit, b, err, want)
		}
	}
}
