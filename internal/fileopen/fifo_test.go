//go:build unix

package fileopen

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
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
