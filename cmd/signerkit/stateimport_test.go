package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signerkit/signerkit/daemon"
	"github.com/signerkit/signerkit/guard/migrate"
)

// migrateFile is a state file the vendors' code wrote (guard/migrate's
// testdata): CometBFT v0.38's FilePV after height 20's precommit, signed
// by the key of seed 31, for chain import-chain.
func migrateFile(t *testing.T, name string) string {
	t.Helper()
	return filepath.Join("..", "..", "guard", "migrate", "testdata", name)
}

// importHome makes a home for chain import-chain with the key of seed,
// and no state.
func importHome(t *testing.T, seed byte) (cfgPath string) {
	t.Helper()
	dir := t.TempDir()
	keyPath := filepath.Join(dir, "k.pem")
	if seed != 0 {
		writeKey(t, keyPath, seed)
	}
	home := filepath.Join(dir, "home")
	if err := run([]string{"init", "-home", home, "-chain", "import-chain", "-key", "inprocess:file=" + keyPath}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(home, "signerkit.toml")
}

func stateOf(t *testing.T, cfgPath string) daemon.ChainState {
	t.Helper()
	cfg, err := daemon.LoadConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	st, _, err := daemon.ShowState(context.Background(), cfg)
	if err != nil || len(st) != 1 {
		t.Fatalf("%+v %v", st, err)
	}
	return st[0]
}

func runImport(args ...string) (string, error) {
	var out bytes.Buffer
	err := run(append([]string{"state", "import"}, args...), &out, &out)
	return out.String(), err
}

func TestStateImport(t *testing.T) {
	cfgPath := importHome(t, 31)
	out, err := runImport("-config", cfgPath, "-from", migrateFile(t, "cometbft038_precommit.json"))
	if err != nil || !strings.Contains(out, "CometBFT FilePV state: last signed 20/0/precommit") || !strings.Contains(out, "stored signature") {
		t.Fatalf("import: %v\n%s", err, out)
	}
	st := stateOf(t, cfgPath)
	if st.Err != nil || st.Height != 20 || st.Round != 0 || st.Step != 3 || st.Signature == nil {
		t.Fatalf("state after import: %+v", st)
	}
	// The same file again changes nothing; an older state is refused.
	if out, err := runImport("-config", cfgPath, "-from", migrateFile(t, "cometbft038_precommit.json")); err != nil {
		t.Fatalf("the same import again: %v\n%s", err, out)
	}
	out, err = runImport("-config", cfgPath, "-from", migrateFile(t, "cometbft038_fresh.json"))
	if err == nil || !strings.Contains(err.Error(), "already holds 20/0/precommit") || !strings.Contains(err.Error(), "never moves a state back") {
		t.Fatalf("an older state: %v\n%s", err, out)
	}
	// A tmkms state (no sign bytes) after it resumes at the next round.
	tmkms := filepath.Join(t.TempDir(), "consensus.json")
	if err := os.WriteFile(tmkms, []byte(`{"height":"25","round":"0","step":2,"block_id":null}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := runImport("-config", cfgPath, "-from", tmkms); err != nil || !strings.Contains(out, "signs from height 25, round 1") {
		t.Fatalf("tmkms: %v\n%s", err, out)
	}
	if st := stateOf(t, cfgPath); st.Height != 25 || st.Round != 1 || st.Step != 0 {
		t.Fatalf("after tmkms: %+v", st)
	}
}

// The file's signature is checked under the chain's key: another key's
// state is refused; a key that cannot be opened costs the stored
// signature only.
func TestStateImportKeyCheck(t *testing.T) {
	from := migrateFile(t, "gno_precommit.json") // seed 33
	cfgPath := importHome(t, 1)
	if out, err := runImport("-config", cfgPath, "-from", from); !errors.Is(err, migrate.ErrSignature) {
		t.Fatalf("another key: %v\n%s", err, out)
	}
	if st := stateOf(t, cfgPath); st.Err == nil {
		t.Fatalf("a refused import made a state: %+v", st)
	}
	// Another chain's file is refused, key or no key.
	for _, seed := range []byte{33, 0} {
		other := importHome(t, seed)
		if err := os.WriteFile(other, bytes.ReplaceAll(mustRead(t, other), []byte("import-chain"), []byte("test11")), 0o600); err != nil {
			t.Fatal(err)
		}
		var ce *migrate.ChainError
		if out, err := runImport("-config", other, "-from", from); !errors.As(err, &ce) || ce.File != "import-chain" {
			t.Fatalf("another chain's file, key seed %d: %v\n%s", seed, err, out)
		}
	}
	cfgPath = importHome(t, 0) // the key file does not exist
	out, err := runImport("-config", cfgPath, "-from", from)
	if err != nil || !strings.Contains(out, "cannot be opened") || !strings.Contains(out, "signs from height 20, round 1") {
		t.Fatalf("no key: %v\n%s", err, out)
	}
}

// Garbled input is refused with the field at fault, and nothing changes.
func TestStateImportBadFile(t *testing.T) {
	cfgPath := importHome(t, 31)
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"height":"twenty","round":0,"step":3}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := runImport("-config", cfgPath, "-from", bad); !errors.Is(err, migrate.ErrNotState) || !strings.Contains(err.Error(), `"height"`) {
		t.Fatalf("%v\n%s", err, out)
	}
	if out, err := runImport("-config", cfgPath); !errors.Is(err, errUsage) || !strings.Contains(out, "-from FILE is required") {
		t.Fatalf("no -from: %v\n%s", err, out)
	}
	if _, err := runImport("-config", cfgPath, "-from", filepath.Join(t.TempDir(), "none.json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("no file: %v", err)
	}
	if st := stateOf(t, cfgPath); st.Err == nil {
		t.Fatalf("a state was made: %+v", st)
	}
}

// statusServer serves a node's /status: the CometBFT v0.38 answer of
// guard/migrate's testdata with its chain and height replaced.
func statusServer(t *testing.T, network, height string) string {
	t.Helper()
	b, err := os.ReadFile(migrateFile(t, "status_cometbft038.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), `"network":"import-chain"`, `"network":"`+network+`"`, 1)
	s = strings.Replace(s, `"latest_block_height":"1234"`, `"latest_block_height":"`+height+`"`, 1)
	s = strings.Replace(s, `"catching_up":true`, `"catching_up":false`, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/status" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, s)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// -node refuses a state behind the chain unless -force, and a node of
// another chain always.
func TestStateImportNode(t *testing.T) {
	from := migrateFile(t, "cometbft038_precommit.json")
	cfgPath := importHome(t, 31)
	out, err := runImport("-config", cfgPath, "-from", from, "-node", statusServer(t, "import-chain", "35"))
	if err == nil || !strings.Contains(err.Error(), "behind the chain's latest height 35") || !strings.Contains(err.Error(), "-force") ||
		!strings.Contains(err.Error(), "state init -height 36") {
		t.Fatalf("behind: %v\n%s", err, out)
	}
	if out, err := runImport("-config", cfgPath, "-from", from, "-node", statusServer(t, "other-chain", "3")); err == nil || !strings.Contains(err.Error(), `on chain "other-chain"`) {
		t.Fatalf("another chain: %v\n%s", err, out)
	}
	if st := stateOf(t, cfgPath); st.Err == nil {
		t.Fatalf("a refused import made a state: %+v", st)
	}
	if out, err := runImport("-config", cfgPath, "-from", from, "-node", statusServer(t, "import-chain", "35"), "-force"); err != nil || !strings.Contains(out, "-force") {
		t.Fatalf("-force: %v\n%s", err, out)
	}
	cfgPath = importHome(t, 31)
	if out, err := runImport("-config", cfgPath, "-from", from, "-node", strings.TrimPrefix(statusServer(t, "import-chain", "20"), "http://")); err != nil {
		t.Fatalf("at the chain's height: %v\n%s", err, out)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
