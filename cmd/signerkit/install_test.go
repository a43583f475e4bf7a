package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/signerkit/signerkit/daemon"
	"github.com/signerkit/signerkit/ledger"
)

const contrib = "../../contrib"

// TestSystemdUnit: systemd's own parser takes the unit and the Ledger
// drop-in without a warning (skipped without systemd-analyze). The unit
// runs the built command in place of /usr/local/bin/signerkit, which
// verify requires to exist.
func TestSystemdUnit(t *testing.T) {
	t.Parallel()
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("no systemd-analyze")
	}
	unit, err := os.ReadFile(filepath.Join(contrib, "systemd", "signerkit.service"))
	if err != nil {
		t.Fatal(err)
	}
	dropIn, err := os.ReadFile(filepath.Join(contrib, "systemd", "signerkit.service.d", "ledger.conf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"RuntimeDirectoryPreserve=yes", "RuntimeDirectoryMode=2770", "StateDirectory=signerkit", "PrivateUsers=yes"} {
		if !bytes.Contains(unit, []byte("\n"+want+"\n")) {
			t.Errorf("the unit lacks %s", want)
		}
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "signerkit.service.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	unit = bytes.ReplaceAll(unit, []byte("/usr/local/bin/signerkit"), []byte(signerkit(t)))
	if err := os.WriteFile(filepath.Join(dir, "signerkit.service"), unit, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "signerkit.service.d", "ledger.conf"), dropIn, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(analyze, "verify", "signerkit.service")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SYSTEMD_UNIT_PATH="+dir+":")
	out, err := cmd.CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// TestUdevRules: the rules name Ledger's vendor id as package ledger
// knows it, and the YubiHSM 2's ids.
func TestUdevRules(t *testing.T) {
	t.Parallel()
	for file, want := range map[string][]string{
		"70-signerkit-ledger.rules":  {fmt.Sprintf(`ATTR{idVendor}=="%04x"`, ledger.VendorID), fmt.Sprintf(`ATTRS{idVendor}=="%04x"`, ledger.VendorID), `GROUP="signerkit"`},
		"70-signerkit-yubihsm.rules": {`ATTR{idVendor}=="1050", ATTR{idProduct}=="0030"`},
	} {
		b, err := os.ReadFile(filepath.Join(contrib, "udev", file))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !bytes.Contains(b, []byte(w)) {
				t.Errorf("%s lacks %s", file, w)
			}
		}
		// Every rule line is KEY[{attr}] (==|!=|=|+=) "value", comma-separated.
		rule := regexp.MustCompile(`^[A-Z]+(\{[A-Za-z]+\})?(==|!=|=|\+=)"[^"]*"(, [A-Z]+(\{[A-Za-z]+\})?(==|!=|=|\+=)"[^"]*")*$`)
		for i, l := range strings.Split(string(b), "\n") {
			if l != "" && !strings.HasPrefix(l, "#") && !rule.MatchString(l) {
				t.Errorf("%s:%d: not a rule: %s", file, i+1, l)
			}
		}
	}
}

// TestInitStateDir: init -state-dir puts the state where the unit keeps
// it, mode 0700, and the config it writes names it.
func TestInitStateDir(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	home, stateDir := filepath.Join(root, "etc"), filepath.Join(root, "var", "lib", "signerkit")
	var out, errb bytes.Buffer
	err := run([]string{"init", "-home", home, "-state-dir", stateDir, "-chain", "c9", "-height", "7",
		"-key", "inprocess:file=" + filepath.Join(home, "v.pem")}, &out, &errb)
	if err != nil {
		t.Fatalf("init: %v\n%s%s", err, out.String(), errb.String())
	}
	cfg, err := daemon.LoadConfig(filepath.Join(home, "signerkit.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.StateDir != stateDir {
		t.Errorf("state_dir %q, want %q", cfg.StateDir, stateDir)
	}
	st, err := os.Stat(stateDir)
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("state dir: %v %v", st.Mode(), err)
	}
	if _, err := os.Stat(filepath.Join(home, "state")); !os.IsNotExist(err) {
		t.Errorf("init made %s/state too: %v", home, err)
	}
	out.Reset()
	if err := run([]string{"state", "show", "-config", filepath.Join(home, "signerkit.toml")}, &out, &errb); err != nil {
		t.Fatalf("state show: %v\n%s", err, errb.String())
	}
	if !regexp.MustCompile(`c9\s+7\s`).MatchString(out.String()) {
		t.Errorf("state show:\n%s", out.String())
	}
}
