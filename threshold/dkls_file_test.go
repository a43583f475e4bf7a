package threshold

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signer"
)

// writeDKLSFiles writes the share files and the configs of a coordinator
// holding share 1 and of parties 2 and 3 (their listen addresses given).
func writeDKLSFiles(t *testing.T, f *dklsFixture, extra string) (coord string, parties map[int]string) {
	t.Helper()
	if _, err := WriteDKLS23ShareFiles(f.dir, f.shares); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "scheme = %q\nshare = \"share-1.pem\"\ncert = \"coordinator-1.crt\"\nkey = \"coordinator-1.key\"\nca = \"ca.crt\"\n%s", SchemeDKLS23, extra)
	parties = map[int]string{}
	for _, id := range []int{2, 3} {
		fmt.Fprintf(&b, "\n[[party]]\nid = %d\naddr = %q\n", id, f.addrs[id])
		parties[id] = filepath.Join(f.dir, fmt.Sprintf("party-%d.toml", id))
		cfg := fmt.Sprintf("scheme = %q\nshare = \"share-%d.pem\"\nlisten = %q\ncert = \"party-%d.crt\"\nkey = \"party-%d.key\"\nca = \"ca.crt\"\ncoordinators = [\"coordinator-1\"]\n",
			SchemeDKLS23, id, f.addrs[id], id, id)
		if err := os.WriteFile(parties[id], []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	coord = filepath.Join(f.dir, "threshold.toml")
	if err := os.WriteFile(coord, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return coord, parties
}

// TestDKLS23ConfigFiles: share and config files written, the parties
// loaded from theirs, and the coordinator opened through signer.Open's
// threshold: scheme, as the daemon opens keys; it signs.
func TestDKLS23ConfigFiles(t *testing.T) {
	f := newDKLSFixture(t)
	coord, parties := writeDKLSFiles(t, f, "pool_size = 2\nhedge_after = \"30ms\"\n")
	if cfg, err := LoadDKLS23CoordinatorFile(coord); err != nil || cfg.HedgeAfter != 30*time.Millisecond || cfg.PoolSize != 2 {
		t.Fatalf("coordinator file: hedge_after %v, pool_size %d, %v", cfg.HedgeAfter, cfg.PoolSize, err)
	}
	for id, p := range parties {
		setup, err := LoadDKLS23PartyFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if setup.Config.Share.ID != id || ConfigSchemeMust(t, p) != SchemeDKLS23 {
			t.Fatalf("party file %d loaded share %d", id, setup.Config.Share.ID)
		}
	}
	uri := "threshold:config=" + coord
	if err := CheckURI(uri); err != nil {
		t.Fatal(err)
	}
	s, err := signer.Open(context.Background(), uri)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if a, err := signer.AlgorithmOf(s); err != nil || a != signer.ECDSASecp256k1 {
		t.Fatalf("algorithm %v %v", a, err)
	}
	msg := []byte("opened through threshold:")
	sig, err := s.SignContext(context.Background(), msg)
	if err != nil {
		t.Fatal(err)
	}
	checkSecp256k1(t, f.shares[0].PublicKey(), msg, sig)
}

func ConfigSchemeMust(t *testing.T, path string) string {
	t.Helper()
	s, err := ConfigScheme(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestDKLS23ConfigErrors: each mistake is a *ConfigFileError naming its
// key.
func TestDKLS23ConfigErrors(t *testing.T) {
	for _, c := range []struct{ from, to, key string }{
		{SchemeDKLS23, "rsa", "scheme"},
		{"ca = ", "nope = 1\nca = ", "nope"},
		{"ca = ", "party_timeout = \"-1s\"\nca = ", "party_timeout"},
		{"id = 3", "id = 1", "party[1].id"},
		{"id = 3", "id = 4", "party[1].id"},
		{"share = \"share-1.pem\"", "share = \"missing.pem\"", "share"},
	} {
		t.Run(c.key, func(t *testing.T) {
			f := dklsSetup(t)
			f.addrs[2], f.addrs[3] = "127.0.0.1:1", "127.0.0.1:2"
			coord, _ := writeDKLSFiles(t, f, "")
			data, _ := os.ReadFile(coord)
			if err := os.WriteFile(coord, []byte(strings.Replace(string(data), c.from, c.to, 1)), 0o600); err != nil {
				t.Fatal(err)
			}
			err := CheckURI("threshold:config=" + coord)
			var ce *ConfigFileError
			if !errors.As(err, &ce) || ce.Key != c.key {
				t.Fatalf("%v: want a *ConfigFileError for %s", err, c.key)
			}
		})
	}
	f := dklsSetup(t)
	f.addrs[2], f.addrs[3] = "127.0.0.1:1", "127.0.0.1:2"
	// A FROST loader refuses a DKLS23 file, naming the scheme.
	coord, parties := writeDKLSFiles(t, f, "")
	if _, err := LoadCoordinatorFile(coord); err == nil || !strings.Contains(err.Error(), "scheme") {
		t.Fatalf("LoadCoordinatorFile of a DKLS23 file: %v", err)
	}
	if _, err := LoadPartyFile(parties[2]); err == nil || !strings.Contains(err.Error(), "scheme") {
		t.Fatalf("LoadPartyFile of a DKLS23 file: %v", err)
	}
	// A share file whose header lies.
	share := filepath.Join(f.dir, "share-2.pem")
	data, _ := os.ReadFile(share)
	if err := os.WriteFile(share, []byte(strings.Replace(string(data), "Participant: 2", "Participant: 3", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadDKLS23PartyFile(parties[2]); !errors.Is(err, signer.ErrCorrupt) {
		t.Fatalf("a share file whose header lies: %v, want signer.ErrCorrupt", err)
	}
}

// TestDKLS23ShareExport: a DKLS23 share file exports under a passphrase
// and imports back, byte for byte, as a FROST one does.
func TestDKLS23ShareExport(t *testing.T) {
	shares, err := dklsShares()
	if err != nil {
		t.Fatal(err)
	}
	plain, err := MarshalDKLS23Share(shares[2])
	if err != nil {
		t.Fatal(err)
	}
	enc, err := ExportShare(plain, []byte("pass"), 10)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ImportShare(enc, []byte("wrong")); !errors.Is(err, signer.ErrWrongPassphrase) {
		t.Fatalf("a wrong passphrase: %v", err)
	}
	back, err := ImportShare(enc, []byte("pass"))
	if err != nil || string(back) != string(plain) {
		t.Fatalf("import: %v", err)
	}
	bad := []byte(strings.Replace(string(plain), "Participant: 3", "Participant: 1", 1))
	if _, err := ExportShare(bad, []byte("pass"), 10); !errors.Is(err, signer.ErrCorrupt) {
		t.Fatalf("exporting a damaged DKLS23 share: %v", err)
	}
}
