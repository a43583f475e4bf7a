package threshold_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/signerkit/signerkit/threshold"
)

// FuzzConfigFiles: no coordinator or party config file, FROST's or
// DKLS23's, panics the loaders, and every one refused is a
// *threshold.ConfigFileError. (The
// files it names do not exist, so nothing loads.)
func FuzzConfigFiles(f *testing.F) {
	f.Add([]byte("public = \"public.pem\"\ncert = \"c.crt\"\nkey = \"c.key\"\nca = \"ca.crt\"\n[[party]]\nid = 1\naddr = \"127.0.0.1:1\"\npin = \"sha256:00\"\n"))
	f.Add([]byte("share = \"s.pem\"\nlisten = \":0\"\ncert = \"p.crt\"\nkey = \"p.key\"\ncoordinators = [\"sha256:\"]\nstate_dir = \"s\"\nchains = [\"\"]\n"))
	f.Add([]byte("[local]\nshare = 1\n"))
	f.Add([]byte("party_timeout = \"-1s\"\n[[party]]\nid = 70000\n"))
	f.Add([]byte("scheme = \"dkls23-secp256k1\"\nshare = \"s.pem\"\ncert = \"c.crt\"\nkey = \"c.key\"\n[[party]]\nid = 2\naddr = \"127.0.0.1:1\"\n"))
	f.Add([]byte("scheme = \"dkls23-secp256k1\"\nshare = \"s.pem\"\nlisten = \":0\"\ncoordinators = [\"c\"]\nmax_presignatures = -1\n"))
	dir := f.TempDir()
	path := filepath.Join(dir, "c.toml")
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		var cfe *threshold.ConfigFileError
		if _, err := threshold.LoadCoordinatorFile(path); err == nil || !errors.As(err, &cfe) {
			t.Fatalf("coordinator config: %v", err)
		}
		if _, err := threshold.LoadDKLS23CoordinatorFile(path); err == nil || !errors.As(err, &cfe) {
			t.Fatalf("DKLS23 coordinator config: %v", err)
		}
		if _, err := threshold.LoadDKLS23PartyFile(path); err == nil || !errors.As(err, &cfe) {
			t.Fatalf("DKLS23 party config: %v", err)
		}
		if _, err := threshold.ConfigScheme(path); err != nil && !errors.As(err, &cfe) {
			t.Fatalf("ConfigScheme: %v", err)
		}
		if s, err := threshold.LoadPartyFile(path); err == nil {
			s.Close()
			t.Fatal("a party config loaded without its files")
		} else if !errors.As(err, &cfe) {
			t.Fatalf("party config: %v", err)
		}
	})
}
