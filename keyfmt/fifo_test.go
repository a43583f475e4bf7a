//go:build unix

package keyfmt

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A FIFO where a node_key.json should be is refused at once, not waited on.
func TestLoadNodeKeyFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "node_key.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadNodeKey(fifo); err == nil || !strings.Contains(err.Error(), "named pipe") || !strings.Contains(err.Error(), fifo) {
		t.Errorf("a FIFO: %v", err)
	}
}
