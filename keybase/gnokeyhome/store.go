package gnokeyhome

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/syndtr/goleveldb/leveldb"

	"github.com/signerkit/signerkit/keybase"
	"github.com/signerkit/signerkit/signer"
)

// Signer is a key of a gnokey home open for signing: keybase's Signer,
// which decrypts gnokey's armor (see keybase.Mode).
type Signer = keybase.Signer

// DefaultLockWait is how long a read waits for a gnokey that holds its
// key database locked, when Config.LockWait is 0.
const DefaultLockWait = 5 * time.Second

// Config says which gnokey home to read, how to unlock its keys and which
// key Open opens.
type Config struct {
	// Home is gnokey's home directory (gnokey's --home), whose
	// data/keys.db holds the keys. Empty means gnokey's default: $GNOHOME,
	// else $GNO_HOME, else "gno" in the user's configuration directory
	// (os.UserConfigDir: ~/.config/gno on Linux).
	Home string
	// Secret gives the passphrase a key is decrypted with, when it is
	// opened (and in PerSign mode on every sign). A key gnokey stored
	// under an empty passphrase (unencrypted) opens with a Secret that
	// returns an empty passphrase. Nil means none: keys can be listed and
	// described, not opened.
	Secret signer.Secret
	// Mode is when Signers decrypt their key: keybase.UnlockOnce (the
	// zero value) or keybase.PerSign, gnokey's own way.
	Mode keybase.Mode
	// Key is the key Open opens: Key.Label is its gnokey name or its
	// address, "g1…" (see Store.OpenKey); Key.ID must be empty;
	// Key.Algorithm, when set, must be the key's. OpenStore ignores Key.
	Key signer.KeyRef
	// LockWait bounds how long a read waits while gnokey holds the key
	// database locked for a write; 0 means DefaultLockWait. A context's
	// deadline also ends the wait. The wait ends with a *LockedError.
	LockWait time.Duration
}

// DefaultHome returns gnokey's default home directory, as gnokey finds
// it: $GNOHOME, else $GNO_HOME, else "gno" in os.UserConfigDir.
func DefaultHome() (string, error) {
	for _, env := range []string{"GNOHOME", "GNO_HOME"} {
		if d := os.Getenv(env); d != "" {
			return d, nil
		}
	}
	d, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("gnokeyhome: no gnokey home: set Config.Home or $GNOHOME: %w", err)
	}
	return filepath.Join(d, "gno"), nil
}

// Store is a gnokey home, open read-only. It writes nothing (no file of
// the home is created, changed or removed, goleveldb's LOCK included):
// keys are added, renamed and deleted with gnokey. Each method opens gnokey's key
// database read-only for the time of its own read and closes it, as
// gnokey does for each command, so a Store never keeps gnokey from
// writing for longer than one read. A Store is safe for concurrent use.
type Store struct {
	home   string
	cfg    Config
	closed atomic.Bool
}

var (
	_ signer.KeyLister = (*Store)(nil)
	_ signer.KeyOpener = (*Store)(nil)
)

var errStoreClosed = fmt.Errorf("gnokeyhome: store: %w", signer.ErrClosed)

func (s *Store) check(ctx context.Context) error {
	if s.closed.Load() {
		return errStoreClosed
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("gnokeyhome: %w", err)
	}
	return nil
}

// Open opens the key cfg.Key names in the gnokey home cfg.Home, as
// OpenStore and Store.OpenKey do.
func Open(ctx context.Context, cfg Config) (*Signer, error) {
	if err := checkRef(cfg.Key); err != nil {
		return nil, err
	}
	s, err := OpenStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.open(ctx, cfg.Key)
}

// OpenStore returns the Store of the gnokey home cfg.Home. The home must
// be a directory (else an error wrapping signer.ErrInvalidArgument, and
// fs.ErrNotExist when it is missing); a home without a key database
// (data/keys.db, which gnokey creates at its first command) holds no
// keys. OpenStore reads nothing else: the database is opened by each
// method.
func OpenStore(ctx context.Context, cfg Config) (*Store, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("gnokeyhome: %w", err)
	}
	if cfg.Mode != keybase.UnlockOnce && cfg.Mode != keybase.PerSign {
		return nil, fmt.Errorf("gnokeyhome: unknown mode %v: %w", cfg.Mode, signer.ErrInvalidArgument)
	}
	switch {
	case cfg.LockWait < 0:
		return nil, fmt.Errorf("gnokeyhome: negative Config.LockWait: %w", signer.ErrInvalidArgument)
	case cfg.LockWait == 0:
		cfg.LockWait = DefaultLockWait
	}
	home := cfg.Home
	if home == "" {
		var err error
		if home, err = DefaultHome(); err != nil {
			return nil, err
		}
	}
	fi, err := os.Stat(home)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("gnokeyhome: gnokey home %s does not exist: %w: %w", home, signer.ErrInvalidArgument, fs.ErrNotExist)
	case err != nil:
		return nil, fmt.Errorf("gnokeyhome: %w", err)
	case !fi.IsDir():
		return nil, fmt.Errorf("gnokeyhome: gnokey home %s is not a directory: %w", home, signer.ErrInvalidArgument)
	}
	return &Store{home: home, cfg: cfg}, nil
}

// Home returns the store's gnokey home directory.
func (s *Store) Home() string { return s.home }

// Close closes the store: its methods fail with signer.ErrClosed from then
// on. It holds nothing open between calls, so there is nothing else to
// release; Signers it opened keep working until they are closed. Close is
// idempotent.
func (s *Store) Close() error {
	s.closed.Store(true)
	return nil
}

// Keys describes every key of the home, of every kind, sorted by name,
// with its address. A record that cannot be read is left out and
// reported in the error (a *RecordError), which wraps each record's
// error; the keys that could be read are returned with it.
func (s *Store) Keys(ctx context.Context) ([]KeyInfo, error) {
	var out []KeyInfo
	var rerr error
	err := s.view(ctx, func(db *leveldb.DB) error {
		out = nil // view may run this twice
		rs, err := records(ctx, db)
		if err != nil && ctx.Err() != nil {
			return err
		}
		rerr = err
		for _, r := range rs {
			r.wipe()
			out = append(out, r.KeyInfo)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, rerr
}

// ListKeys describes the keys OpenKey can open, the Local ones, sorted by
// label, which is the key's gnokey name (Keys describes every kind).
// Records that cannot be read are reported as Keys reports them.
func (s *Store) ListKeys(ctx context.Context) ([]signer.KeyInfo, error) {
	keys, err := s.Keys(ctx)
	if keys == nil {
		return nil, err
	}
	var out []signer.KeyInfo
	for _, k := range keys {
		if k.Kind == Local {
			out = append(out, signer.KeyInfo{Label: k.Name, Algorithm: k.Algorithm, Public: k.Public})
		}
	}
	return out, err
}

// KeyInfo describes the key label selects: a gnokey name or an address,
// as for OpenKey.
func (s *Store) KeyInfo(ctx context.Context, label string) (KeyInfo, error) {
	var info KeyInfo
	err := s.view(ctx, func(db *leveldb.DB) error {
		r, err := find(db, label)
		if err != nil {
			return err
		}
		r.wipe()
		info = r.KeyInfo
		return nil
	})
	return info, err
}

// OpenKey opens the Local key ref.Label selects as a *Signer in the
// store's Mode, decrypting it once with the store's Secret as gnokey
// does (armor, bcrypt, XSalsa20-Poly1305; see keybase.OpenArmor). A wrong
// passphrase is a *keybase.PassphraseError (signer.ErrWrongPassphrase)
// whose Label is the key's name. A key of another kind is a *KindError.
//
// ref.Label is a gnokey name (any string gnokey took) or, as with gnokey,
// an address "g1…": a label that parses as an address selects the key
// gnokey's address index gives for it, and only when the index has no
// such address, the key of that name (gnokey looks up such a label as an
// address only). ref.ID must be empty; ref.Algorithm, when set, must be
// the key's.
func (s *Store) OpenKey(ctx context.Context, ref signer.KeyRef) (signer.Signer, error) {
	if err := checkRef(ref); err != nil {
		return nil, err
	}
	sg, err := s.open(ctx, ref)
	if err != nil {
		return nil, err // not a nil *Signer in a non-nil interface
	}
	return sg, nil
}

// ExportArmor returns the armored private key of the Local key label
// selects, as gnokey stored it (encrypted, unless stored under an empty
// passphrase): what `gnokey export` would write, with no passphrase
// asked for. keybase.Store.ImportArmor takes it, under a file name of the
// caller's choice.
func (s *Store) ExportArmor(ctx context.Context, label string) ([]byte, error) {
	var out []byte
	err := s.view(ctx, func(db *leveldb.DB) error {
		r, err := find(db, label)
		if err != nil {
			return err
		}
		if r.Kind != Local {
			r.wipe()
			return &KindError{Name: r.Name, Kind: r.Kind}
		}
		clear(out) // view may run this twice
		out = r.armor
		return nil
	})
	return out, err
}

func (s *Store) open(ctx context.Context, ref signer.KeyRef) (*Signer, error) {
	var r *record
	err := s.view(ctx, func(db *leveldb.DB) error {
		if r != nil { // view may run this twice
			r.wipe()
		}
		var err error
		r, err = find(db, ref.Label)
		return err
	})
	if err != nil {
		return nil, err
	}
	defer r.wipe()
	if r.Kind != Local {
		return nil, &KindError{Name: r.Name, Kind: r.Kind}
	}
	if ref.Algorithm != 0 && ref.Algorithm != r.Algorithm {
		return nil, fmt.Errorf("gnokeyhome: key %s is %v, not %v: %w", quote(r.Name), r.Algorithm, ref.Algorithm, signer.ErrInvalidArgument)
	}
	sg, err := keybase.OpenArmor(ctx, r.armor, s.cfg.Secret, s.cfg.Mode)
	if err != nil {
		var pe *keybase.PassphraseError
		if errors.As(err, &pe) {
			c := *pe
			c.Label = r.Name
			return nil, &c
		}
		return nil, &keyError{name: r.Name, err: err}
	}
	if !equalPublic(sg.Public(), r.Public) {
		sg.Close()
		return nil, &keyError{name: r.Name, err: fmt.Errorf("the private key does not match the public key gnokey stored with it: %w", signer.ErrCorrupt)}
	}
	return sg, nil
}

// find reads the record label selects: by address (gnokey's index),
// then by name.
func find(db *leveldb.DB, label string) (*record, error) {
	if db == nil {
		return nil, fmt.Errorf("gnokeyhome: key %s: %w", quote(label), signer.ErrKeyNotFound)
	}
	if addr, ok := parseAddress(label); ok {
		name, found, err := readAddress(db, addr)
		if err != nil {
			return nil, err
		}
		if found {
			r, err := readRecord(db, name)
			if err != nil {
				return nil, err
			}
			if r == nil {
				return nil, &RecordError{Key: quote(addr + addrSfx), Problem: "it names the key " + quote(name) + ", which has no record"}
			}
			if r.Address != addr {
				r.wipe()
				return nil, &RecordError{Key: quote(addr + addrSfx), Problem: "it names the key " + quote(name) + ", of address " + r.Address}
			}
			return r, nil
		}
	}
	r, err := readRecord(db, label)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, fmt.Errorf("gnokeyhome: key %s: %w", quote(label), signer.ErrKeyNotFound)
	}
	return r, nil
}

// parseAddress returns label as gnokey's index writes addresses (bech32,
// lower case) when it is a gno.land address, as tm2's
// crypto.AddressFromBech32 parses them.
func parseAddress(label string) (string, bool) {
	if _, ok := keybase.ParseAddress(label); !ok {
		return "", false
	}
	return strings.ToLower(label), true
}

// checkRef checks a reference to a key: a label, no ID.
func checkRef(ref signer.KeyRef) error {
	switch {
	case ref.ID != "":
		return fmt.Errorf("gnokeyhome: key %v: keys have no id: %w", ref, signer.ErrKeyNotFound)
	case ref.Label == "":
		return fmt.Errorf("gnokeyhome: a key reference needs a label (a gnokey name or address): %w", signer.ErrInvalidArgument)
	}
	return nil
}

// KindError is a key that cannot sign here: a Ledger, offline or multisig
// key, of which gnokey stores no private key. It unwraps to
// signer.ErrUnsupported.
type KindError struct {
	Name string
	Kind Kind
}

func (e *KindError) Error() string {
	return fmt.Sprintf("gnokeyhome: key %s is a %v key, which has no private key in gnokey's keybase", quote(e.Name), e.Kind)
}

// Unwrap returns signer.ErrUnsupported.
func (e *KindError) Unwrap() error { return signer.ErrUnsupported }

// keyError says which key an error is about.
type keyError struct {
	name string
	err  error
}

func (e *keyError) Error() string {
	return fmt.Sprintf("gnokeyhome: key %s: %s", quote(e.name), strings.TrimPrefix(e.err.Error(), "keybase: "))
}
func (e *keyError) Unwrap() error { return e.err }

func equalPublic(a, b any) bool {
	switch a := a.(type) {
	case ed25519.PublicKey:
		b, ok := b.(ed25519.PublicKey)
		return ok && bytes.Equal(a, b)
	case *ecdsa.PublicKey:
		return a.Equal(b)
	}
	return false
}
