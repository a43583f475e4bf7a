package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/yubihsm"
)

// signerkit yubihsm setup: the first-run setup of a YubiHSM 2, after the
// manner of tmkms's yubihsm setup. From the factory authentication key
// (id 1, password "password") it makes an admin authentication key, a
// signing-only one, and a wrap key for backups; turns on the command
// audit of every key-management command; then deletes the factory key.
// The new secrets are printed once.

// auditedCommands are the commands setup turns command audit on for: the
// ones that make, change, move or delete keys, and the options.
var auditedCommands = []byte{
	0x08, // Reset Device
	0x44, // Put Authentication Key
	0x45, // Put Asymmetric Key
	0x46, // Generate Asymmetric Key
	0x4a, // Export Wrapped
	0x4b, // Import Wrapped
	0x4c, // Put Wrap Key
	0x4f, // Set Option
	0x58, // Delete Object
	0x5b, // Generate Wrap Key
	0x6c, // Change Authentication Key
}

// Capabilities of the keys setup makes.
const (
	// signerCaps is all a validator's signing needs: sessions, listing,
	// object info and public keys need no capability.
	signerCaps = yubihsm.CapSignEdDSA | yubihsm.CapSignECDSA
	// wrapDelegated is what keys moved under the wrap key may do: sign,
	// and leave again under wrap.
	wrapDelegated = yubihsm.CapSignEdDSA | yubihsm.CapSignECDSA | yubihsm.CapExportableUnderWrap
)

func cmdYubiHSM(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "setup" {
		fmt.Fprintln(stderr, "signerkit yubihsm: setup -connector URL")
		return errUsage
	}
	o := setupOptions{}
	fs := newFlags("yubihsm setup", stderr)
	fs.StringVar(&o.connector, "connector", "", "the yubihsm-connector's URL, e.g. http://127.0.0.1:12345")
	authKey := fs.String("auth-key", "1", "the authentication key to set up with (hex id): the factory key 1, or with -force an admin key")
	fs.StringVar(&o.pinSource, "pin-source", "", "where its password is (env:NAME, file:PATH); the factory key's is \"password\"")
	fs.BoolVar(&o.force, "force", false, "run although the factory key 1 is gone (the device was set up already), with -auth-key and -pin-source")
	adminID := fs.String("admin-id", "2", "the id (hex) of the new admin authentication key")
	signerID := fs.String("signer-id", "3", "the id (hex) of the new signing-only authentication key")
	wrapID := fs.String("wrap-id", "1", "the id (hex) of the new wrap key")
	fs.IntVar(&o.domains, "domains", 1, "the domains of the signing key and the keys it signs with, as a bit mask (1 is domain 1)")
	fs.StringVar(&o.wrapSource, "wrap-key-source", "", "restore: the wrap key of another device, in hex, from env:NAME or file:PATH (default: a new random one)")
	fs.BoolVar(&o.forceAudit, "force-audit", false, "also turn force audit on: the device then refuses every audited command while its log is full, so something must read it")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	var err error
	for _, f := range []struct {
		name string
		v    string
		to   *uint16
	}{{"auth-key", *authKey, &o.authKey}, {"admin-id", *adminID, &o.adminID}, {"signer-id", *signerID, &o.signerID}, {"wrap-id", *wrapID, &o.wrapID}} {
		if *f.to, err = yubihsm.ParseID(f.v); err != nil {
			fmt.Fprintf(stderr, "signerkit yubihsm setup: -%s: %v\n", f.name, err)
			return errUsage
		}
	}
	if o.connector == "" || fs.NArg() != 0 || o.domains < 1 || o.domains > 0xffff || o.adminID == o.signerID {
		fmt.Fprintln(stderr, "signerkit yubihsm setup: -connector URL is required; -domains 1 to ffff; distinct -admin-id and -signer-id")
		return errUsage
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return yubihsmSetup(ctx, o, stdout)
}

type setupOptions struct {
	connector, pinSource, wrapSource string
	authKey, adminID, signerID       uint16
	wrapID                           uint16
	domains                          int
	force, forceAudit                bool
}

// setupSecrets are what setup makes and prints once.
type setupSecrets struct {
	admin, signer string // passwords: 32 hex digits
	wrap          []byte // AES-256
}

func setupRandomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func (o setupOptions) secrets() (setupSecrets, error) {
	s := setupSecrets{admin: setupRandomHex(16), signer: setupRandomHex(16)}
	if o.wrapSource == "" {
		s.wrap = make([]byte, 32)
		rand.Read(s.wrap)
		return s, nil
	}
	var err error
	s.wrap, err = readWrapKey(o.wrapSource)
	return s, err
}

// readWrapKey reads a wrap key of 16, 24 or 32 bytes, in hex, from a
// secret source (env:NAME, file:PATH).
func readWrapKey(source string) ([]byte, error) {
	src, err := signer.SecretSource(source)
	if err != nil {
		return nil, fmt.Errorf("-wrap-key-source: %w", err)
	}
	text, err := src()
	if err != nil {
		return nil, fmt.Errorf("-wrap-key-source: %w", err)
	}
	defer clear(text)
	key, err := hex.DecodeString(strings.TrimSpace(string(text)))
	if err != nil || (len(key) != 16 && len(key) != 24 && len(key) != 32) {
		return nil, fmt.Errorf("-wrap-key-source: want a wrap key of 16, 24 or 32 bytes in hex")
	}
	return key, nil
}

// openAs opens a store on the connector with authentication key id.
func (o setupOptions) openAs(ctx context.Context, id uint16, secret signer.Secret) (*yubihsm.Store, error) {
	return yubihsm.OpenStore(ctx, yubihsm.Config{Connector: o.connector, AuthKeyID: id, Secret: secret, Domains: uint16(o.domains)})
}

// openSetupKey opens the key setup runs with: the factory key, or with
// -force the admin key given. A factory key that no longer opens means the
// device was set up already: refused, unless forced.
func (o setupOptions) openSetupKey(ctx context.Context) (*yubihsm.Store, error) {
	if o.authKey != yubihsm.DefaultAuthKeyID && !o.force {
		return nil, fmt.Errorf("signerkit yubihsm setup: setup starts from the factory key 1; to run it with key %04x give -force", o.authKey)
	}
	secret := signer.SecretBytes([]byte("password"))
	if o.pinSource != "" {
		var err error
		if secret, err = signer.SecretSource(o.pinSource); err != nil {
			return nil, fmt.Errorf("signerkit yubihsm setup: -pin-source: %w", err)
		}
	} else if o.authKey != yubihsm.DefaultAuthKeyID {
		return nil, fmt.Errorf("signerkit yubihsm setup: -auth-key %04x needs -pin-source", o.authKey)
	}
	st, err := o.openAs(ctx, o.authKey, secret)
	if err == nil {
		return st, nil
	}
	if o.authKey == yubihsm.DefaultAuthKeyID && (errors.Is(err, signer.ErrWrongPassphrase) || errors.Is(err, signer.ErrKeyNotFound)) {
		return nil, fmt.Errorf("signerkit yubihsm setup: the factory key 1 with its factory password opens no session (%v): this YubiHSM 2 was set up already, and setup leaves it as it is. To run it again, give its admin key: -auth-key 2 -pin-source file:PATH -force", err)
	}
	return nil, fmt.Errorf("signerkit yubihsm setup: %w", err)
}

func yubihsmSetup(ctx context.Context, o setupOptions, stdout io.Writer) error {
	sec, err := o.secrets()
	if err != nil {
		return fmt.Errorf("signerkit yubihsm setup: %w", err)
	}
	defer clear(sec.wrap)
	st, err := o.openSetupKey(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	for _, c := range []struct {
		typ  uint8
		id   uint16
		what string
	}{{yubihsm.TypeAuthKey, o.adminID, "-admin-id"}, {yubihsm.TypeAuthKey, o.signerID, "-signer-id"}, {yubihsm.TypeWrapKey, o.wrapID, "-wrap-id"}} {
		if taken, err := st.HasObject(ctx, c.typ, c.id); err != nil {
			return fmt.Errorf("signerkit yubihsm setup: %w", err)
		} else if taken {
			return fmt.Errorf("signerkit yubihsm setup: the device has an object %04x of that type already: choose another %s, or delete it first", c.id, c.what)
		}
	}
	var made []uint16 // authentication keys made, deleted again if setup fails before the end
	undo := func() {
		for _, id := range made {
			_ = st.DeleteObject(context.WithoutCancel(ctx), yubihsm.TypeAuthKey, id)
		}
	}
	for _, k := range []struct {
		key  yubihsm.AuthKey
		pw   string
		what string
	}{
		{yubihsm.AuthKey{ID: o.adminID, Label: "signerkit admin", Domains: 0xffff, Caps: yubihsm.CapAll, Delegated: yubihsm.CapAll}, sec.admin, "admin key"},
		{yubihsm.AuthKey{ID: o.signerID, Label: "signerkit signer", Domains: uint16(o.domains), Caps: signerCaps}, sec.signer, "signing key"},
	} {
		if _, err := st.PutAuthKey(ctx, k.key, []byte(k.pw)); err != nil {
			undo()
			return fmt.Errorf("signerkit yubihsm setup: %s: %w", k.what, err)
		}
		made = append(made, k.key.ID)
	}
	// Everything else through the new admin key, which so proves to work
	// before the factory key goes.
	admin, err := o.openAs(ctx, o.adminID, signer.SecretBytes([]byte(sec.admin)))
	if err != nil {
		undo()
		return fmt.Errorf("signerkit yubihsm setup: the new admin key %04x does not open a session (the factory key is left in place): %w", o.adminID, err)
	}
	defer admin.Close()
	wk := yubihsm.WrapKey{ID: o.wrapID, Label: "signerkit backup", Domains: 0xffff, Caps: yubihsm.CapExportWrapped | yubihsm.CapImportWrapped, Delegated: wrapDelegated}
	if _, err := admin.PutWrapKey(ctx, wk, sec.wrap); err != nil {
		undo()
		return fmt.Errorf("signerkit yubihsm setup: wrap key (the new authentication keys are deleted again): %w", err)
	}
	if err := setupAudit(ctx, admin, o.forceAudit); err != nil {
		_ = admin.DeleteObject(context.WithoutCancel(ctx), yubihsm.TypeWrapKey, o.wrapID)
		undo()
		return err
	}
	st.Close() // its sessions go before the key they were opened with
	if o.authKey == yubihsm.DefaultAuthKeyID || o.force {
		if present, err := admin.HasObject(ctx, yubihsm.TypeAuthKey, yubihsm.DefaultAuthKeyID); err != nil {
			return fmt.Errorf("signerkit yubihsm setup: %w", err)
		} else if present {
			if err := admin.DeleteObject(ctx, yubihsm.TypeAuthKey, yubihsm.DefaultAuthKeyID); err != nil {
				return fmt.Errorf("signerkit yubihsm setup: deleting the factory key 1: %w", err)
			}
		}
	}
	printSetup(stdout, o, sec)
	return nil
}

// setupAudit turns on the command audit of auditedCommands, and force
// audit if asked.
func setupAudit(ctx context.Context, admin *yubihsm.Store, force bool) error {
	var v []byte
	for _, c := range auditedCommands {
		v = append(v, c, 1)
	}
	if err := admin.SetOption(ctx, yubihsm.OptionCommandAudit, v); err != nil {
		return fmt.Errorf("signerkit yubihsm setup: command audit: %w", err)
	}
	if force {
		if err := admin.SetOption(ctx, yubihsm.OptionForceAudit, []byte{1}); err != nil {
			return fmt.Errorf("signerkit yubihsm setup: force audit: %w", err)
		}
	}
	return nil
}

func printSetup(w io.Writer, o setupOptions, s setupSecrets) {
	fmt.Fprintf(w, `YubiHSM 2 at %s is set up. The factory key 1 is deleted.

Write these down now: they are shown once, and signerkit keeps no copy.

  admin key %04x password:    %s
      every capability: makes, backs up and deletes keys; keep it offline
  signer key %04x password:   %s
      signs only (sign-eddsa, sign-ecdsa), domains %#x: the daemon's key
  wrap key %04x (AES-%d):    %s
      restores backups (keys export) on this or another device set up with
      -wrap-key-source holding it

Command audit is on for key management (put, generate, delete, export,
import, options).`, o.connector, o.adminID, s.admin, o.signerID, s.signer, o.domains, o.wrapID, len(s.wrap)*8, hex.EncodeToString(s.wrap))
	if o.forceAudit {
		fmt.Fprint(w, " Force audit is on: read the log (yubihsm-shell audit get) before it fills, or the device refuses audited commands.")
	}
	fmt.Fprintf(w, `

Next: store the signer password in a file only signerkit reads, then
  signerkit keys generate -to 'yubihsm:connector=%s;auth-key=%x;label=validator?pin-source=file:ADMIN-PASSWORD-FILE'
and in signerkit.toml:
  key = "yubihsm:connector=%s;auth-key=%x;label=validator?pin-source=file:SIGNER-PASSWORD-FILE"
`, o.connector, o.adminID, o.connector, o.signerID)
}
