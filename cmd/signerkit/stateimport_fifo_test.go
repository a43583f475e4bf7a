//go:build unix

package main

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/signerkit/signerkit/internal/fileopen"
)

// A FIFO given as the state file is refused at once, not waited on, and
// nothing is made.
func TestStateImportFIFO(t *testing.T) {
	cfgPath := importHome(t, 31)
	fifo := filepath.Join(t.TempDir(), "priv_validator_state.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	var nr *fileopen.NotRegularError
	if _, err := runImport("-config", cfgPath, "-from", fifo); !errors.As(err, &nr) || !strings.Contains(err.Error(), fifo) {
		t.Fatalf("a FIFO: %v", err)
	}
	if st := stateOf(t, cfgPath); st.Err == nil {
		t.Fatalf("a state was made: %+v", st)
	}
}

// keys import reads its file once, bounded, and refuses a FIFO at once.
func TestKeysImportFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "priv_validator_key.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	err := run([]string{"keys", "import", "-from", fifo, "-to", "inprocess:file=" + filepath.Join(dir, "k.pem")}, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "not a regular file") || !strings.Contains(err.Error(), fifo) {
		t.Fatalf("a FIFO: %v\n%s", err, out.String())
	}
}
