package threshold_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/threshold"
)

// TestConfigFileErrorLines: a config file that cannot be decoded is a
// *ConfigFileError naming the line and key at fault: a misspelt key at
// the top or in a [[party]] table, a value of the wrong type, a syntax
// error.
func TestConfigFileErrorLines(t *testing.T) {
	head := "public = \"public.pem\"\ncert = \"c.crt\"\n"
	for _, tc := range []struct {
		name, body string
		line       int
		key        string
	}{
		{"misspelt", head + "party_timout = \"1s\"\n", 3, "party_timout"},
		{"misspelt in a table", head + "\n[[party]]\nid = 1\n\n[[party]]\nid = 2\nadress = \"x\"\n", 9, "party.adress"},
		{"wrong type", head + "party_timeout = \"1s\"\n[[party]]\nid = \"one\"\n", 5, "party.id"},
		{"syntax", head + "key = \n", 3, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "threshold.toml")
			if err := os.WriteFile(path, []byte(tc.body), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := threshold.LoadCoordinatorFile(path)
			var cfe *threshold.ConfigFileError
			if !errors.As(err, &cfe) || cfe.Line != tc.line || tc.key != "" && cfe.Key != tc.key {
				t.Fatalf("got %#v (%v), want line %d, key %q", cfe, err, tc.line, tc.key)
			}
			if !strings.Contains(err.Error(), path+":") {
				t.Errorf("%v does not name the file and line", err)
			}
		})
	}
}

// TestConfigFileBoundedRead: a config file is read with a bound, and
// what is not a regular file is refused without blocking.
func TestConfigFileBoundedRead(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.toml")
	if err := os.WriteFile(big, []byte("# "+strings.Repeat("x", 2<<20)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := threshold.LoadCoordinatorFile(big)
	var cfe *threshold.ConfigFileError
	if !errors.As(err, &cfe) || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("a 2 MiB config: %v", err)
	}
	fifo := filepath.Join(dir, "fifo.toml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := threshold.LoadPartyFile(fifo); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Fatalf("a FIFO as the party config: %v", err)
	}
	if _, err := threshold.CertFilePin(fifo); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Fatalf("a FIFO as a certificate: %v", err)
	}
	if _, err := threshold.LoadCoordinatorFile(filepath.Join(dir, "missing.toml")); !errors.Is(err, signer.ErrKeyNotFound) {
		t.Fatalf("a missing config: %v", err)
	}
}
