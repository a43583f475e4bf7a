package main

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signerkit/signerkit/daemon"
)

// TestInitAccessFlags: init takes the chain id from the node's genesis,
// and writes allow (a node_key.json path, made absolute) or allow_any, so
// that no config is edited by hand; the config it writes loads.
func TestInitAccessFlags(t *testing.T) {
	dir := t.TempDir()
	gen := filepath.Join(dir, "genesis.json")
	if err := os.WriteFile(gen, []byte(`{"genesis_time":"2026-12-06T00:00:00Z","chain_id":"test-chain-Xy12"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	pub, _, _ := ed25519.GenerateKey(nil)
	idKey := "ed25519:" + hex.EncodeToString(pub)
	t.Chdir(dir)
	cases := []struct {
		name     string
		args     []string
		allow    []string
		allowAny bool
	}{
		{"genesis", []string{"-genesis", "genesis.json", "-validator", "unix:///tmp/x.sock"}, nil, false},
		{"allow-any", []string{"-genesis", gen, "-validator", "tcp://127.0.0.1:26659", "-allow-any"}, nil, true},
		{"allow", []string{"-chain", "test-chain-Xy12", "-genesis", gen, "-validator", "tcp://127.0.0.1:26659", "-allow", idKey}, []string{idKey}, false},
	}
	for _, c := range cases {
		home := filepath.Join(dir, c.name)
		var out, errOut bytes.Buffer
		if err := cmdInit(append([]string{"-home", home, "-key", "inprocess:file=" + filepath.Join(home, "v.pem")}, c.args...), &out, &errOut); err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, errOut.String())
		}
		cfg, err := daemon.LoadConfigToInspect(filepath.Join(home, "signerkit.toml"))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		ch := cfg.Chains[0]
		if ch.ID != "test-chain-Xy12" {
			t.Errorf("%s: chain %q", c.name, ch.ID)
		}
		v := ch.Validators[0]
		if v.AllowAny != c.allowAny || strings.Join(v.Allow, ",") != strings.Join(c.allow, ",") {
			t.Errorf("%s: allow %q allow_any %v", c.name, v.Allow, v.AllowAny)
		}
	}
	// A node_key.json named relative to the working directory is written
	// absolute, since the daemon runs elsewhere.
	_, nodePriv, _ := ed25519.GenerateKey(nil)
	nodeKey := `{"priv_key":{"type":"tendermint/PrivKeyEd25519","value":"` + base64.StdEncoding.EncodeToString(nodePriv) + `"}}`
	if err := os.WriteFile(filepath.Join(dir, "node_key.json"), []byte(nodeKey), 0o600); err != nil {
		t.Fatal(err)
	}
	acc := &initAccess{allow: "node_key.json, " + idKey}
	chain := "c"
	if err := acc.resolve(newFlags("init", os.Stderr), &chain); err != nil {
		t.Fatal(err)
	}
	if acc.entries[0] != filepath.Join(dir, "node_key.json") || acc.entries[1] != idKey {
		t.Errorf("entries %q", acc.entries)
	}
}

// TestInitAccessRefusals: a genesis of another chain than -chain, a file
// that is no genesis, and -allow with -allow-any are each refused before
// anything is written.
func TestInitAccessRefusals(t *testing.T) {
	dir := t.TempDir()
	gen := filepath.Join(dir, "genesis.json")
	if err := os.WriteFile(gen, []byte(`{"chain_id":"one"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`not json`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-chain", "two", "-genesis", gen}, `is chain "one"`},
		{[]string{"-genesis", bad}, "not a genesis file"},
		{[]string{"-genesis", filepath.Join(dir, "none.json")}, "no such file"},
		{[]string{"-allow", "ed25519:" + strings.Repeat("ab", 32), "-allow-any"}, "give one"},
		// Each -allow entry is read as start will read it.
		{[]string{"-allow", "ed25519:00"}, `-allow "ed25519:00"`},
		{[]string{"-allow", "gpub1xyz"}, `-allow "gpub1xyz"`},
		{[]string{"-allow", filepath.Join(dir, "node_key.json")}, "no such node_key.json"},
		{[]string{"-allow", bad}, "identity key file"},
	} {
		home := filepath.Join(dir, "home")
		var out, errOut bytes.Buffer
		err := cmdInit(append([]string{"-home", home}, c.args...), &out, &errOut)
		if !errors.Is(err, errUsage) || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("%v: %v, want %q in %q", c.args, err, c.want, errOut.String())
		}
		if _, err := os.Stat(home); !os.IsNotExist(err) {
			t.Errorf("%v: init wrote %s", c.args, home)
		}
	}
}

// FuzzGenesisChainID: any input gives a chain id that is printable ASCII
// of 1 to 50 bytes, or an error wrapping errNotGenesis; never a panic.
func FuzzGenesisChainID(f *testing.F) {
	f.Add([]byte(`{"genesis_time":"2026-12-06T00:00:00Z","chain_id":"test-chain-Xy12","validators":[]}`))
	f.Add([]byte(`{"chain_id":"dev","app_state":{"@type":"/gno.GenesisState"}}`))
	f.Add([]byte(`{"chain_id":""}`))
	f.Add([]byte(`{"chain_id":"a b"}`))
	f.Add([]byte(`{"chain_id":7}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, b []byte) {
		id, err := parseGenesisChainID(b)
		if err != nil {
			if !errors.Is(err, errNotGenesis) || id != "" {
				t.Fatalf("%q: %q, %v", b, id, err)
			}
			return
		}
		if id == "" || len(id) > 50 || strings.IndexFunc(id, func(r rune) bool { return r < 0x21 || r > 0x7e }) >= 0 {
			t.Fatalf("%q: chain id %q", b, id)
		}
	})
}
