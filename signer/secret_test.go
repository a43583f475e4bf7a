package signer_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signerkit/signerkit/signer"
)

// TestSecretFileChecks: SecretFile reads a small regular file that only
// its owner may use, and refuses anything else before reading it.
func TestSecretFileChecks(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil { // whatever the umask
			t.Fatal(err)
		}
		return p
	}
	const pin = "Zq7-pin"
	for _, c := range []struct {
		name string
		mode os.FileMode
		size int
	}{
		{"0600", 0o600, 0}, {"0400", 0o400, 0}, {"0700", 0o700, 0},
		{"at the cap", 0o600, signer.MaxSecretFileSize},
	} {
		b := []byte(pin + "\n")
		if c.size > 0 {
			b = append(b, strings.Repeat("x", c.size-len(b))...)
		}
		p := write(c.name, b, c.mode)
		if got, err := signer.SecretFile(p)(); err != nil || string(got) != pin {
			t.Errorf("%s: SecretFile = %q, %v; want %q", c.name, got, err, pin)
		}
	}
	// A symbolic link, as Kubernetes secret volumes have, is followed and
	// the file it names checked.
	link := filepath.Join(dir, "link")
	if err := os.Symlink(write("target", []byte(pin), 0o600), link); err != nil {
		t.Fatal(err)
	}
	if got, err := signer.SecretFile(link)(); err != nil || string(got) != pin {
		t.Errorf("link to a 0600 file: %q, %v", got, err)
	}

	big := write("big", []byte(pin+"\n"+strings.Repeat("x", signer.MaxSecretFileSize)), 0o600)
	if got, err := signer.SecretFile(big)(); !errors.Is(err, signer.ErrInvalidArgument) || got != nil {
		t.Errorf("a file of more than %d bytes: %q, %v; want ErrInvalidArgument", signer.MaxSecretFileSize, got, err)
	}
	if got, err := signer.SecretFile(dir)(); !errors.Is(err, signer.ErrInvalidArgument) || got != nil {
		t.Errorf("a directory: %q, %v; want ErrInvalidArgument", got, err)
	}
	testSecretFileUnix(t, write)
}
