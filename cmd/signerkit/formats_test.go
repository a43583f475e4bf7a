package main

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/keyfmt"
)

// TestShowAfterInit: right after init, with a TCP validator whose
// allowlist init leaves empty, keys show, state show and identity show
// work (the validator key is needed for the genesis before the node's
// identity is known), while start refuses, naming the allowlist.
func TestShowAfterInit(t *testing.T) {
	t.Parallel()
	home := filepath.Join(t.TempDir(), "home")
	keyPath := filepath.Join(home, "v.pem")
	runCmd(t, "init", "-home", home, "-chain", "c1", "-protocol", "tm2-remote", "-validator", "tcp://127.0.0.1:1",
		"-key", "inprocess:file="+keyPath, "-height", "1000")
	cfgPath := filepath.Join(home, "signerkit.toml")
	pub := writeKey(t, keyPath, 7)

	out := runCmd(t, "keys", "show", "-config", cfgPath)
	for _, want := range []string{"ed25519:" + hex.EncodeToString(pub), keyfmt.GnoPubKey(pub), keyfmt.GnoAddress(pub), keyfmt.CometBFTAddress(pub),
		indent(keyfmt.CometBFTGenesisValidator(pub, genesisPower, "validator").JSON()), indent(keyfmt.GnoGenesisValidator(pub, genesisPower, "validator").JSON())} {
		if !strings.Contains(out, want) {
			t.Errorf("keys show lacks %s:\n%s", want, out)
		}
	}
	out = runCmd(t, "state", "show", "-config", cfgPath)
	if !strings.Contains(out, "1000") || !strings.Contains(out, "initialised, nothing signed yet") {
		t.Errorf("state show:\n%s", out)
	}

	idSigner, err := inprocess.Open(t.Context(), inprocess.Config{File: filepath.Join(home, "identity.pem")})
	if err != nil {
		t.Fatal(err)
	}
	id := idSigner.Public().(ed25519.PublicKey)
	_ = idSigner.Close()
	out = runCmd(t, "identity", "show", "-config", cfgPath)
	for _, want := range []string{"ed25519:" + hex.EncodeToString(id), `tcp_authorized_keys = ["` + keyfmt.GnoPubKey(id) + `"]`,
		`allowed_kms_pubkeys = ["ed25519:` + hex.EncodeToString(id) + `"]`, "tm2-remote (chain c1)", "pins no signer key"} {
		if !strings.Contains(out, want) {
			t.Errorf("identity show lacks %s:\n%s", want, out)
		}
	}

	var stderr bytes.Buffer
	cmd := command(t, nil, "start", "-config", cfgPath)
	cmd.Stderr = &stderr
	var ee *exec.ExitError
	if err := cmd.Run(); !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "no allowlist") {
		t.Fatalf("start with an empty allowlist over TCP: %v\n%s", err, stderr.String())
	}
}
