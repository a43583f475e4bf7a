package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"text/template"

	"github.com/signerkit/signerkit/daemon"
	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/internal/atomicfile"
)

var configTemplate = template.Must(template.New("config").Parse(`# signerkit.toml — the config of ` + "`signerkit start`" + `.
# Every key is listed; a key signerkit does not know is an error that names
# it and its line. docs/daemon.md explains each.

# The double-sign state: one file per chain, synced before any signature
# leaves. Never copy it between two running signers.
state_dir = "{{.StateDir}}"

# This signer's Ed25519 identity for SecretConnection (TCP). A gno node lists
# its public key in [consensus.priv_validator.tmkms_listener] allowed_kms_pubkeys
# (tm2-tmkms) or remote_signer tcp_authorized_keys (tm2-remote).
identity_key = "{{.IdentityKey}}"

# /metrics, /healthz and /readyz. Keep it on localhost or a private network.
metrics_addr = "127.0.0.1:26661"

# How long SIGTERM waits for a sign in flight before stopping it.
shutdown_grace = "10s"

# The longest wait between dials of a node that signerkit dials (cometbft-*,
# tm2-tmkms). A restarted CometBFT node waits 3s for its signer.
redial_max_backoff = "500ms"

log_level = "info"   # debug, info, warn, error
log_format = "text"  # text or json

[[chain]]
# The chain id; requests for any other are refused.
id = "{{.Chain}}"
# cometbft-v0.38 | cometbft-v0.34 | tm2-tmkms (gno v1.7.1's tmkms_listener):
#   the node listens, signerkit dials it.
# tm2-remote (gno's native remote_signer): signerkit listens, the node dials.
protocol = "{{.Protocol}}"
# The validator key as a signerkit URI, e.g.
#   ledger:                                   the first Ledger found
#   yubihsm:connector=http://127.0.0.1:12345;auth-key=1;label=validator?pin-source=/run/secrets/hsm
#   pkcs11:token=validator;object=consensus?module-path=/usr/lib/softhsm/libsofthsm2.so&pin-source=env:PIN
#   keybase:dir=/var/lib/gnokey;label=validator?pin-source=env:GNOKEY_PASS
#   inprocess:file=/etc/signerkit/priv_validator_key.json
key = "{{.Key}}"
# Bounds one request, guard and backend included (nodes wait 5s).
sign_timeout = "5s"

  [[chain.validator]]
  # tcp://host:port or unix:///path: the node's listener (or, for
  # tm2-remote, where signerkit listens).
  addr = "{{.Validator}}"
  # Over TCP: the node identity keys served, each as gno prints it (gpub1…),
  # as ed25519:<hex|base64>, or as the path of the node's node_key.json (a gno
  # node's identity, which "gnoland secrets get node_id" prints). A refused node's
  # key is logged. SIGHUP reloads this list. "signerkit identity show" prints
  # this signer's own identity for the node's config.
  allow = [{{.Allow}}]
  # A stock CometBFT node (cometbft-v0.38/v0.34) makes a new identity at every
  # start, so no allowlist can pin it. Choose one:
  #   - addr = "unix:///run/signerkit/validator.sock" with the node on this
  #     host (the socket's file permissions are the boundary); or
  #   - allow_any = true over TCP, on a private address only: anyone who can
  #     reach the node's priv_validator_laddr port first can pose as the node
  #     and ask signerkit for signatures (the guard still refuses any double
  #     sign).
  allow_any = {{.AllowAny}}
`))

func cmdInit(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("init", stderr)
	home := fs.String("home", "", "directory to write signerkit.toml and identity.pem into (required)")
	chain := fs.String("chain", "test-chain", "the chain id")
	protocol := fs.String("protocol", daemon.ProtocolCometBFT038, "cometbft-v0.38, cometbft-v0.34, tm2-tmkms or tm2-remote")
	key := fs.String("key", "ledger:", "the validator key's URI")
	validator := fs.String("validator", "unix:///run/signerkit/validator.sock", "the validator's address, tcp://host:port or unix:///path")
	height := fs.Int64("height", 0, "the first height this signer may sign: one more than the last height any earlier signer of this key may have signed (1 for a new chain). "+
		"Without it no double-sign state is written, and start refuses until signerkit state init -height H is run")
	stateDir := fs.String("state-dir", "", "the double-sign state directory, made mode 0700 if missing (default: DIR/state)")
	acc := initAccessFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := acc.resolve(fs, chain); err != nil {
		fmt.Fprintf(stderr, "signerkit init: %v\n", err)
		return errUsage
	}
	if *home == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "signerkit init: -home DIR is required")
		return errUsage
	}
	heightSet := false
	fs.Visit(func(f *flag.Flag) { heightSet = heightSet || f.Name == "height" })
	if heightSet && *height < 1 {
		fmt.Fprintln(stderr, "signerkit init: -height H is the first height this signer may sign, at least 1 (1 for a new chain)")
		return errUsage
	}
	if err := checkThresholdKey(*key); err != nil {
		return fmt.Errorf("signerkit init: -key: %w", err)
	}
	return initHome(*home, *stateDir, *chain, *protocol, *key, *validator, *height, acc, stdout)
}

// initHome writes home's config and identity key, and makes the state
// directory (stateDir, or home/state when it is ""). The
// chain's double-sign state is written only for a height of 1 or more;
// at 0 none is, and the daemon refuses to start until `state init` makes
// it: init never guesses where a key's signing history ends.
func initHome(home, stateDir, chain, protocol, key, validator string, height int64, acc *initAccess, stdout io.Writer) error {
	abs, err := filepath.Abs(home)
	if err != nil {
		return err
	}
	cfgPath := filepath.Join(abs, "signerkit.toml")
	idPath := filepath.Join(abs, "identity.pem")
	if stateDir == "" {
		stateDir = filepath.Join(abs, "state")
	} else if stateDir, err = filepath.Abs(stateDir); err != nil {
		return err
	}
	for _, p := range []string{cfgPath, idPath} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("signerkit init: %s exists; init never overwrites", p)
		}
	}
	for _, d := range []string{abs, stateDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("signerkit init: %w", err)
		}
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	if err := inprocess.WriteKeyFile(idPath, priv); err != nil {
		return fmt.Errorf("signerkit init: %w", err)
	}
	var cfg bytes.Buffer
	err = configTemplate.Execute(&cfg, map[string]string{"StateDir": stateDir, "IdentityKey": idPath, "Chain": chain,
		"Protocol": protocol, "Key": key, "Validator": validator, "Allow": acc.allowTOML(), "AllowAny": fmt.Sprint(acc != nil && acc.allowAny)})
	if err == nil {
		err = atomicfile.CreateFile(cfgPath, cfg.Bytes(), atomicfile.Options{})
	}
	if err != nil {
		return fmt.Errorf("signerkit init: %w", err)
	}
	fmt.Fprintf(stdout, "wrote %s\nwrote %s (identity ed25519:%x)\n", cfgPath, idPath, []byte(priv.Public().(ed25519.PublicKey)))
	if height < 1 {
		fmt.Fprintf(stdout, "made %s, with no double-sign state for chain %s: `signerkit start` refuses to start until you run\n"+
			"  signerkit state init -config %s -chain %s -height H\n"+
			"H being the first height this signer may sign: one more than the last height any earlier signer of this key may have signed (1 for a new chain).\n"+
			"Moving from FilePV, tmkms or horcrux, read its state file instead (docs/migrate.md):\n"+
			"  signerkit state import -config %s -chain %s -from priv_validator_state.json\n",
			stateDir, chain, cfgPath, chain, cfgPath, chain)
		return nil
	}
	if err := daemon.InitState(context.Background(), stateDir, chain, height); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: chain %s signs nothing below height %d\n", stateDir, chain, height)
	return nil
}
