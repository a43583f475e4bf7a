package daemon

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestReloadReplacesHandshake: a TCP validator's SecretConnection
// handshake is made once, from its allowlist, and made again by Reload
// with the allowlist of the reloaded file.
func TestReloadReplacesHandshake(t *testing.T) {
	dir := t.TempDir()
	keyPath, _ := writeKey(t, dir, 5)
	idPath, _ := writeKey(t, dir, 6)
	stateDir := filepath.Join(dir, "state")
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := InitState(context.Background(), stateDir, chainID, 1); err != nil {
		t.Fatal(err)
	}
	peerA := ed25519.NewKeyFromSeed(bytesOf(11, 32)).Public().(ed25519.PublicKey)
	peerB := ed25519.NewKeyFromSeed(bytesOf(12, 32)).Public().(ed25519.PublicKey)
	cfgPath := filepath.Join(dir, "signerkit.toml")
	write := func(allow string) {
		t.Helper()
		data := fmt.Sprintf(`state_dir = %q
identity_key = %q

[[chain]]
id = %q
protocol = "tm2-remote"
key = "inprocess:file=%s"

  [[chain.validator]]
  addr = "tcp://127.0.0.1:0"
  %s
`, stateDir, idPath, chainID, keyPath, allow)
		if err := os.WriteFile(cfgPath, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(fmt.Sprintf("allow = [\"%x\"]", []byte(peerA)))
	cfg, err := LoadConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(context.Background(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	v := d.vals[0]
	first := v.auth.Load()
	if first == nil || first.h == nil || len(first.allow) != 1 || !first.allow[0].Equal(peerA) {
		t.Fatalf("handshake at start: %+v", first)
	}

	write(fmt.Sprintf("allow = [\"%x\", \"%x\"]", []byte(peerA), []byte(peerB)))
	if err := d.Reload(); err != nil {
		t.Fatal(err)
	}
	second := v.auth.Load()
	if second == first || len(second.allow) != 2 || !second.allow[1].Equal(peerB) {
		t.Fatalf("handshake after reload: %+v", second)
	}

	write("allow_any = true")
	if err := d.Reload(); err != nil {
		t.Fatal(err)
	}
	if third := v.auth.Load(); third == second || third.allow != nil {
		t.Fatalf("handshake after reload to allow_any: %+v", third)
	}
}
