package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/signerkit/signerkit/internal/keyfile"

	"github.com/signerkit/signerkit/daemon"
	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/keybase"
	"github.com/signerkit/signerkit/keyfmt"
	"github.com/signerkit/signerkit/signer"
)

// CometBFTAddress is a validator's address as CometBFT shows it: the first
// 20 bytes of the SHA-256 of its Ed25519 public key, in upper-case hex.
func CometBFTAddress(pub ed25519.PublicKey) string {
	return keyfmt.CometBFTAddress(pub)
}

func cmdKeys(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "signerkit keys: show, list, import, generate, export or delete")
		return errUsage
	}
	if cmd, ok := keyMgmtCommands[args[0]]; ok { // keymgmt.go
		return cmd(args[1:], stdout, stderr)
	}
	fs := newFlags("keys "+args[0], stderr)
	path, from, to := new(string), new(string), new(string)
	switch args[0] {
	case "show", "list":
		fs.StringVar(path, "config", "", "the config file: its chains' keys")
	case "import":
		fs.StringVar(from, "from", "", "the key file (priv_validator_key.json, PEM PKCS#8 or SEC 1)")
		fs.StringVar(to, "to", "", "where to put it, a URI: keybase:dir=…;label=…?pin-source=…, yubihsm:…;label=…, pkcs11:…;object=…, inprocess:file=PATH")
	}
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	switch args[0] {
	case "show":
		return keysShow(ctx, *path, fs.Args(), stdout, stderr)
	case "list":
		if *path != "" {
			return keysShow(ctx, *path, nil, stdout, stderr)
		}
		if fs.NArg() != 1 {
			fmt.Fprintln(stderr, "signerkit keys list: -config F, or one store URI (keybase:dir=…, yubihsm:…, pkcs11:…)")
			return errUsage
		}
		return keysList(ctx, fs.Arg(0), stdout)
	case "import":
		if *from == "" || *to == "" {
			fmt.Fprintln(stderr, "signerkit keys import: -from FILE and -to URI are required")
			return errUsage
		}
		return keysImport(ctx, *from, *to, stdout)
	}
	fmt.Fprintf(stderr, "signerkit keys: unknown %q: show, list, import, generate, export or delete\n", args[0])
	return errUsage
}

func keysShow(ctx context.Context, path string, uris []string, stdout, stderr io.Writer) error {
	type named struct{ name, uri string }
	var keys []named
	if path != "" {
		cfg, err := daemon.LoadConfigToInspect(path)
		if err != nil {
			return err
		}
		// A running daemon holds the state directory and its devices:
		// a Ledger or a Speculos serves one client, so opening the key
		// here would take it from the daemon. Show the keys its state is
		// bound to instead. Otherwise hold the lock while the keys are
		// open, so that a daemon starting meanwhile is refused rather
		// than losing its device.
		lock, err := daemon.LockStateDir(cfg.StateDir)
		if errors.Is(err, daemon.ErrStateInUse) {
			if len(uris) > 0 {
				return fmt.Errorf("signerkit keys show: a daemon is running on %s: show the config's keys alone, or stop it", cfg.StateDir)
			}
			return boundKeysShow(cfg, stdout)
		}
		if err == nil {
			defer lock.Close()
		}
		for _, ch := range cfg.Chains {
			keys = append(keys, named{"chain " + ch.ID + ": " + daemon.RedactURI(ch.Key), ch.Key})
		}
	}
	for _, u := range uris {
		keys = append(keys, named{daemon.RedactURI(u), u})
	}
	if len(keys) == 0 {
		fmt.Fprintln(stderr, "signerkit keys show: -config F or a key URI")
		return errUsage
	}
	for _, k := range keys {
		s, err := signer.Open(ctx, k.uri)
		if err != nil {
			return fmt.Errorf("signerkit keys: %s: %w", k.name, err)
		}
		keyLines(stdout, k.name, s.Public())
		_ = s.Close()
	}
	return nil
}

// boundKeysShow shows the public key each of cfg's chains is bound to in
// its state directory, for a daemon that is running: no key is opened.
func boundKeysShow(cfg *daemon.Config, stdout io.Writer) error {
	fmt.Fprintf(stdout, "a daemon is running on %s: the keys its state is bound to (no device opened)\n", cfg.StateDir)
	for _, ch := range cfg.Chains {
		pub, err := daemon.BoundKey(cfg.StateDir, ch.ID)
		if err != nil {
			return fmt.Errorf("signerkit keys: chain %s: %w", ch.ID, err)
		}
		name := "chain " + ch.ID + ": " + daemon.RedactURI(ch.Key)
		if pub == nil {
			fmt.Fprintf(stdout, "%s\n  not bound yet (the daemon binds it at its first start)\n", name)
			continue
		}
		keyLines(stdout, name, pub)
	}
	return nil
}

// openStore opens the key store a URI names, through the stores the
// backends register (signer.RegisterStore), with the key it names.
func openStore(ctx context.Context, uri string) (signer.Store, signer.KeyRef, error) {
	st, ref, err := signer.OpenStore(ctx, uri)
	if err != nil {
		return nil, ref, fmt.Errorf("signerkit keys: %s: %w", daemon.RedactURI(uri), err)
	}
	return st, ref, nil
}

func keysList(ctx context.Context, uri string, stdout io.Writer) error {
	st, _, err := openStore(ctx, uri)
	if err != nil {
		return err
	}
	defer st.Close()
	lister, ok := st.(signer.KeyLister)
	if !ok {
		return fmt.Errorf("signerkit keys list: %s cannot list its keys", daemon.Scheme(uri))
	}
	infos, err := lister.ListKeys(ctx)
	if err != nil {
		return fmt.Errorf("signerkit keys list: %w", err)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LABEL\tID\tALGORITHM\tPUBLIC KEY\tGNO ADDRESS\tCOMETBFT ADDRESS")
	for _, k := range infos {
		pub, gno, cmt := "-", "-", "-"
		if ed, ok := k.Public.(ed25519.PublicKey); ok {
			pub, cmt = fmt.Sprintf("ed25519:%x", []byte(ed)), CometBFTAddress(ed)
		}
		if a, err := keybase.Address(k.Public); err == nil {
			gno = a
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", k.Label, k.ID, k.Algorithm, pub, gno, cmt)
	}
	return tw.Flush()
}

// maxImportFile bounds what keys import reads: larger than any key file
// or wrapped backup.
const maxImportFile = 1 << 20

func keysImport(ctx context.Context, from, to string, stdout io.Writer) error {
	// One bounded read that refuses a FIFO, for both kinds of file.
	data, err := keyfile.Read(from, maxImportFile)
	if err != nil {
		return fmt.Errorf("signerkit keys import: %s: %w", from, err)
	}
	defer clear(data)
	if isWrappedBackup(data) {
		return keysImportWrapped(ctx, data, to, stdout) // keymgmt.go
	}
	priv, err := inprocess.ParseKeyFile(data)
	if err != nil {
		return fmt.Errorf("signerkit keys import: %s: %w", from, err)
	}
	edPriv, ok := priv.(ed25519.PrivateKey)
	if !ok {
		return fmt.Errorf("signerkit keys import: %s holds a %T; validators take Ed25519", from, priv)
	}
	defer clear(edPriv)
	st, ref, err := openStore(ctx, to)
	if err != nil {
		return err
	}
	defer st.Close()
	imp, ok := st.(signer.KeyImporter)
	if !ok {
		return fmt.Errorf("signerkit keys import: %s cannot import keys", daemon.Scheme(to))
	}
	label := ref.Label
	if label == "" {
		return fmt.Errorf("signerkit keys import: %s names no key (label=…, object=… or file=…)", daemon.RedactURI(to))
	}
	info, err := imp.ImportKey(ctx, edPriv, signer.Ed25519, label)
	if err != nil {
		return fmt.Errorf("signerkit keys import: %w", err)
	}
	keyLines(stdout, fmt.Sprintf("imported to %s as %q", daemon.Scheme(to), info.Label), info.Public)
	return nil
}
