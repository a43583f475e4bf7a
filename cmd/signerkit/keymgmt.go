package main

import (
	"bufio"
	"context"
	"crypto"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/signerkit/signerkit/daemon"
	"github.com/signerkit/signerkit/internal/atomicfile"
	"github.com/signerkit/signerkit/signer"
)

// keys generate, export, delete, and keys import of a wrapped backup:
// key management through the stores the backends register
// (signer.OpenStore) and what each can do (signer.KeyGenerator,
// ExportableKeyGenerator, KeyWrapper, KeyDeleter).

// keyMgmtCommands are the keys subcommands of this file, each parsing its
// own flags.
var keyMgmtCommands = map[string]func(args []string, stdout, stderr io.Writer) error{
	"generate": cmdKeysGenerate,
	"export":   cmdKeysExport,
	"delete":   cmdKeysDelete,
}

// keysStdin is where keys delete reads its confirmation; tests replace it.
var keysStdin io.Reader = os.Stdin

func keyMgmtContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), time.Minute)
}

// wrapKeyAlgorithm is the -algorithm of keys generate that makes a wrap
// key on a PKCS#11 token rather than a signing key.
const wrapKeyAlgorithm = "aes-wrap"

// wrapKeyMaker is a store that can make a wrap key (pkcs11.Store).
type wrapKeyMaker interface {
	GenerateWrapKey(ctx context.Context, label string) ([]byte, error)
	PutWrapKey(ctx context.Context, label string, key []byte) ([]byte, error)
}

func cmdKeysGenerate(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("keys "+"generate", stderr)
	to := fs.String("to", "", "where to make the key, a URI naming it: yubihsm:…;label=…, pkcs11:…;object=…, keybase:dir=…;label=…, inprocess:file=PATH")
	algName := fs.String("algorithm", signer.Ed25519.String(), "the key's algorithm (validators take ed25519); aes-wrap makes a wrap key on a PKCS#11 token")
	exportable := fs.Bool("exportable", false, "let the key leave the device encrypted under a wrap key (keys export); without it a device key never leaves")
	wrapSource := fs.String("wrap-key-source", "", "with -algorithm aes-wrap: put this wrap key (hex, from env:NAME or file:PATH) rather than make one on the token, so that another token given it restores the backups")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *to == "" || fs.NArg() != 0 {
		fs.Usage()
		return errUsage
	}
	ctx, cancel := keyMgmtContext()
	defer cancel()
	st, ref, err := openStore(ctx, *to)
	if err != nil {
		return err
	}
	defer st.Close()
	if ref.Label == "" {
		return fmt.Errorf("signerkit keys generate: %s names no key: give it a label (label=…, object=… or file=…)", daemon.RedactURI(*to))
	}
	if *algName == wrapKeyAlgorithm {
		return keyMgmtWrapKey(ctx, st, *to, ref.Label, *wrapSource, stdout)
	}
	if *wrapSource != "" {
		return fmt.Errorf("signerkit keys generate: -wrap-key-source goes with -algorithm %s", wrapKeyAlgorithm)
	}
	alg, err := signer.ParseAlgorithm(*algName)
	if err != nil {
		return fmt.Errorf("signerkit keys generate: -algorithm: %w", err)
	}
	info, err := keyMgmtGenerate(ctx, st, *to, alg, ref.Label, *exportable)
	if err != nil {
		return err
	}
	name := fmt.Sprintf("generated %v key %q on %s", alg, info.Label, daemon.Scheme(*to))
	if info.ID != "" {
		name += " (id " + info.ID + ")"
	}
	keyLines(stdout, name, info.Public)
	if *exportable {
		fmt.Fprintln(stdout, "  exportable under wrap: back it up now with signerkit keys export")
	}
	return nil
}

// keyMgmtWrapKey makes a wrap key on a token: generated there, or the one
// source holds.
func keyMgmtWrapKey(ctx context.Context, st signer.Store, uri, label, source string, stdout io.Writer) error {
	m, ok := st.(wrapKeyMaker)
	if !ok {
		return fmt.Errorf("signerkit keys generate: %s stores cannot make wrap keys here (a YubiHSM 2 gets its wrap key from signerkit yubihsm setup)", daemon.Scheme(uri))
	}
	if source == "" {
		id, err := m.GenerateWrapKey(ctx, label)
		if err != nil {
			return fmt.Errorf("signerkit keys generate: %w", err)
		}
		fmt.Fprintf(stdout, "made wrap key %q (id %x, AES-256) on %s; it never leaves the token, so its backups restore only here\n", label, id, daemon.Scheme(uri))
		return nil
	}
	key, err := readWrapKey(source)
	if err != nil {
		return fmt.Errorf("signerkit keys generate: %w", err)
	}
	defer clear(key)
	id, err := m.PutWrapKey(ctx, label, key)
	if err != nil {
		return fmt.Errorf("signerkit keys generate: %w", err)
	}
	fmt.Fprintf(stdout, "put wrap key %q (id %x, AES-%d) on %s; a token given the same key restores its backups\n", label, id, len(key)*8, daemon.Scheme(uri))
	return nil
}

// keyMgmtGenerate makes the key in st, exportable under wrap if asked: a store
// that cannot tell the two apart (a key file, a keybase) refuses
// -exportable rather than pretend.
func keyMgmtGenerate(ctx context.Context, st signer.Store, uri string, alg signer.Algorithm, label string, exportable bool) (signer.KeyInfo, error) {
	var info signer.KeyInfo
	var err error
	if exportable {
		g, ok := st.(signer.ExportableKeyGenerator)
		if !ok {
			return info, fmt.Errorf("signerkit keys generate: -exportable: %s keys are files, which you back up as files; only device keys (yubihsm:, pkcs11:) are made exportable", daemon.Scheme(uri))
		}
		info, err = g.GenerateExportableKey(ctx, alg, label)
	} else {
		g, ok := st.(signer.KeyGenerator)
		if !ok {
			return info, fmt.Errorf("signerkit keys generate: %s cannot make keys", daemon.Scheme(uri))
		}
		info, err = g.GenerateKey(ctx, alg, label)
	}
	if err != nil {
		return info, fmt.Errorf("signerkit keys generate: %w", err)
	}
	return info, nil
}

// keyMgmtFind describes the key ref names in st, through its KeyLister.
func keyMgmtFind(ctx context.Context, st signer.Store, uri string, ref signer.KeyRef) (signer.KeyInfo, error) {
	lister, ok := st.(signer.KeyLister)
	if !ok {
		return signer.KeyInfo{}, fmt.Errorf("%s cannot list its keys", daemon.Scheme(uri))
	}
	infos, err := lister.ListKeys(ctx)
	if err != nil {
		return signer.KeyInfo{}, err
	}
	var found []signer.KeyInfo
	for _, k := range infos {
		if (ref.Label == "" || k.Label == ref.Label) && (ref.ID == "" || strings.EqualFold(strings.TrimPrefix(ref.ID, "0x"), k.ID)) {
			found = append(found, k)
		}
	}
	switch len(found) {
	case 0:
		return signer.KeyInfo{}, fmt.Errorf("%s has no key %v: %w", daemon.RedactURI(uri), ref, signer.ErrKeyNotFound)
	case 1:
		return found[0], nil
	}
	return signer.KeyInfo{}, fmt.Errorf("%d keys match %v in %s: name it by id: %w", len(found), ref, daemon.RedactURI(uri), signer.ErrInvalidArgument)
}

func cmdKeysDelete(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("keys "+"delete", stderr)
	yes := fs.Bool("yes", false, "delete without asking")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errUsage
	}
	uri := fs.Arg(0)
	ctx, cancel := keyMgmtContext()
	defer cancel()
	st, ref, err := openStore(ctx, uri)
	if err != nil {
		return err
	}
	defer st.Close()
	if ref.Label == "" && ref.ID == "" {
		return fmt.Errorf("signerkit keys delete: %s names no key", daemon.RedactURI(uri))
	}
	del, ok := st.(signer.KeyDeleter)
	if !ok {
		return fmt.Errorf("signerkit keys delete: %s cannot delete keys", daemon.Scheme(uri))
	}
	info, err := keyMgmtFind(ctx, st, uri, ref)
	if err != nil {
		return fmt.Errorf("signerkit keys delete: %w", err)
	}
	keyLines(stdout, fmt.Sprintf("about to delete %q%s from %s", info.Label, keyIDSuffix(info.ID), daemon.Scheme(uri)), info.Public)
	if !*yes {
		if err := confirmDelete(stdout, info); err != nil {
			return err
		}
	}
	if err := del.DeleteKey(ctx, info.Ref()); err != nil {
		return fmt.Errorf("signerkit keys delete: %w", err)
	}
	fmt.Fprintf(stdout, "deleted %q%s\n", info.Label, keyIDSuffix(info.ID))
	return nil
}

func keyIDSuffix(id string) string {
	if id == "" {
		return ""
	}
	return " id " + id
}

// errNotConfirmed is what keys delete returns when the answer is not the
// key's name.
var errNotConfirmed = errors.New("signerkit keys delete: not confirmed: nothing deleted")

// confirmDelete asks for the key's label (or id, for a key without one) on
// keysStdin, and accepts only that.
func confirmDelete(stdout io.Writer, info signer.KeyInfo) error {
	want := info.Label
	if want == "" {
		want = info.ID
	}
	fmt.Fprintf(stdout, "This cannot be undone. Type %q to delete it: ", want)
	line, err := bufio.NewReader(keysStdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("signerkit keys delete: reading the confirmation: %w", err)
	}
	if strings.TrimRight(line, "\r\n") != want {
		fmt.Fprintln(stdout)
		return errNotConfirmed
	}
	return nil
}

func cmdKeysExport(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("keys "+"export", stderr)
	from := fs.String("from", "", "the key to back up, a URI naming it (yubihsm: or pkcs11:)")
	wrapName := fs.String("wrap", "", "the wrap key in the same device: its label, or id:HEX")
	out := fs.String("out", "", "the backup file to write (a new file, mode 0600)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *from == "" || *wrapName == "" || *out == "" || fs.NArg() != 0 {
		fs.Usage()
		return errUsage
	}
	wrapRef := parseWrapRef(*wrapName)
	ctx, cancel := keyMgmtContext()
	defer cancel()
	st, ref, err := openStore(ctx, *from)
	if err != nil {
		return err
	}
	defer st.Close()
	w, ok := st.(signer.KeyWrapper)
	if !ok {
		return fmt.Errorf("signerkit keys export: %s keys are not exported under wrap: back the file or directory up as it is", daemon.Scheme(*from))
	}
	info, err := keyMgmtFind(ctx, st, *from, ref)
	if err != nil {
		return fmt.Errorf("signerkit keys export: %w", err)
	}
	blob, err := w.ExportWrapped(ctx, info.Ref(), wrapRef)
	if err != nil {
		return fmt.Errorf("signerkit keys export: %w", err)
	}
	b := &wrappedBackup{Scheme: daemon.Scheme(*from), Wrap: wrapRef, Label: info.Label, ID: info.ID, Algorithm: info.Algorithm, Public: info.Public, Data: blob}
	data, err := b.marshal()
	if err != nil {
		return fmt.Errorf("signerkit keys export: %w", err)
	}
	if err := atomicfile.CreateFile(*out, data, atomicfile.Options{Perm: 0o600}); err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("signerkit keys export: %s exists: choose another -out", *out)
		}
		return fmt.Errorf("signerkit keys export: %w", err)
	}
	keyLines(stdout, fmt.Sprintf("exported %q%s under wrap key %v to %s", info.Label, keyIDSuffix(info.ID), wrapRef, *out), info.Public)
	fmt.Fprintln(stdout, "  the file is encrypted under the wrap key: restore it with signerkit keys import -from FILE -to URI on a device that holds the same wrap key")
	return nil
}

// parseWrapRef reads -wrap: id:HEX, or a label.
func parseWrapRef(s string) signer.KeyRef {
	if id, ok := strings.CutPrefix(s, "id:"); ok {
		return signer.KeyRef{ID: strings.TrimPrefix(strings.ToLower(id), "0x")}
	}
	return signer.KeyRef{Label: s}
}

// keysImportWrapped restores a keys export backup into the store to
// names, under the wrap key the backup names.
func keysImportWrapped(ctx context.Context, data []byte, to string, stdout io.Writer) error {
	b, err := parseWrappedBackup(data)
	if err != nil {
		return fmt.Errorf("signerkit keys import: %w", err)
	}
	if s := daemon.Scheme(to); s != b.Scheme {
		return fmt.Errorf("signerkit keys import: the backup was exported from a %s: device and restores only into one (not %s)", b.Scheme, s)
	}
	st, _, err := openStore(ctx, to)
	if err != nil {
		return err
	}
	defer st.Close()
	w, ok := st.(signer.KeyWrapper)
	if !ok {
		return fmt.Errorf("signerkit keys import: %s cannot import wrapped keys", daemon.Scheme(to))
	}
	info, err := w.ImportWrapped(ctx, b.Data, b.Wrap)
	if err != nil {
		return fmt.Errorf("signerkit keys import: %w", err)
	}
	if eq, ok := info.Public.(interface{ Equal(crypto.PublicKey) bool }); !ok || !eq.Equal(b.Public) {
		return fmt.Errorf("signerkit keys import: the device restored a key %q%s whose public key is not the one the backup names: check it before use", info.Label, keyIDSuffix(info.ID))
	}
	keyLines(stdout, fmt.Sprintf("restored %q%s to %s under wrap key %v", info.Label, keyIDSuffix(info.ID), daemon.Scheme(to), b.Wrap), info.Public)
	return nil
}

// isWrappedBackup reports whether a file's contents are a keys export
// backup rather than a key file.
func isWrappedBackup(data []byte) bool {
	return strings.HasPrefix(strings.TrimLeft(string(data), " \t\r\n"), "-----BEGIN "+backupPEMType+"-----")
}
