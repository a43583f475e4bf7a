package keybase

import (
	"context"
	"crypto"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/signerkit/signerkit/signer"
)

// Config configures a Store. The zero value writes gnokey-compatible keys.
type Config struct {
	// Cost is the bcrypt cost of the keys the store encrypts; 0 means
	// DefaultCost (12). gnokey reads only cost 12: keys written at another
	// cost carry a "cost" header that gnokey ignores, so it refuses them as
	// a wrong passphrase. Lower costs are for tests. Keys are read at the
	// cost they were written with, whatever this says.
	Cost int
	// AllowUnencrypted lets the store write keys with an empty passphrase,
	// which gnokey stores unencrypted (protected by the file's mode
	// alone). By default an empty passphrase is refused.
	AllowUnencrypted bool
}

// Store is a directory of named gnokey keys, one file each. See the package
// doc for the file format. A Store is safe for concurrent use, and on
// Linux, macOS and the BSDs so are several Stores on one directory, in one
// process or several: writers take a lock file (flock(2)). Elsewhere only
// the writers of one Store are serialised. Every file is replaced whole by
// an atomic rename.
type Store struct {
	dir  string
	cfg  Config
	sema chan struct{} // this Store's writers, before the lock file
}

const (
	keySuffix = ".key"
	lockName  = ".lock"
	// MaxName is the longest key name, in bytes.
	MaxName = 100
)

// OpenStore opens the key directory dir, creating it with mode 0700 if it
// does not exist. A directory that other users can read or enter is
// refused with an error wrapping signer.ErrPermissionDenied (except on
// Windows, where modes say nothing).
func OpenStore(dir string, cfg Config) (*Store, error) {
	if dir == "" {
		return nil, fmt.Errorf("keybase: empty directory name: %w", signer.ErrInvalidArgument)
	}
	if cfg.Cost == 0 {
		cfg.Cost = DefaultCost
	}
	if cfg.Cost < MinCost || cfg.Cost > MaxCost {
		return nil, fmt.Errorf("keybase: bcrypt cost %d, want %d to %d: %w", cfg.Cost, MinCost, MaxCost, signer.ErrInvalidArgument)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("keybase: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("keybase: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("keybase: %s is not a directory: %w", dir, signer.ErrInvalidArgument)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("keybase: %s has mode %v, open to other users; chmod 700 it: %w", dir, fi.Mode().Perm(), signer.ErrPermissionDenied)
	}
	return &Store{dir: dir, cfg: cfg, sema: make(chan struct{}, 1)}, nil
}

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

// CheckName reports whether name can name a key: 1 to MaxName bytes of
// ASCII letters, digits, '.', '_' and '-', starting with a letter or digit.
// Anything else (a path separator, "..", a leading dot) is refused with an
// error wrapping signer.ErrInvalidArgument, so no name reaches outside the
// directory or onto the store's own files.
func CheckName(name string) error {
	ok := len(name) > 0 && len(name) <= MaxName
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case (c == '.' || c == '_' || c == '-') && i > 0:
		default:
			ok = false
		}
	}
	if !ok {
		return fmt.Errorf("keybase: key name %s: want 1 to %d of A-Z a-z 0-9 . _ -, starting with a letter or digit: %w", quoted(name), MaxName, signer.ErrInvalidArgument)
	}
	return nil
}

func (s *Store) path(name string) string { return filepath.Join(s.dir, name+keySuffix) }

// checkFree fails early, before any key derivation, when name is taken.
func (s *Store) checkFree(ctx context.Context, name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("keybase: %w", err)
	}
	if _, err := os.Lstat(s.path(name)); err == nil {
		return fmt.Errorf("keybase: key %q: %w", name, signer.ErrKeyExists)
	}
	return nil
}

// passphrase gets a passphrase for writing a key.
func (s *Store) passphrase(pass Passphrase) ([]byte, error) {
	p, err := pass.get()
	if err != nil {
		return nil, err
	}
	if len(p) == 0 && !s.cfg.AllowUnencrypted {
		return nil, fmt.Errorf("keybase: empty passphrase: the key would be stored unencrypted (set Config.AllowUnencrypted to allow it): %w", signer.ErrInvalidArgument)
	}
	return p, nil
}

// store encrypts k under pass and writes it as a new key.
func (s *Store) store(ctx context.Context, name string, k *privateKey, pass Passphrase) (signer.KeyInfo, error) {
	p, err := s.passphrase(pass)
	if err != nil {
		return signer.KeyInfo{}, err
	}
	armor, err := seal(ctx, k, p, s.cfg.Cost, rand.Reader)
	clear(p)
	if err != nil {
		return signer.KeyInfo{}, err
	}
	defer clear(armor) // the key in base64, when unencrypted
	return s.storeArmor(ctx, name, k, armor)
}

func (s *Store) storeArmor(ctx context.Context, name string, k *privateKey, armor []byte) (signer.KeyInfo, error) {
	pub := k.public()
	data, err := keyFileBytes(pub, armor)
	if err != nil {
		return signer.KeyInfo{}, err
	}
	defer clear(data)
	if err := s.put(ctx, name, data, false); err != nil {
		return signer.KeyInfo{}, err
	}
	return signer.KeyInfo{Label: name, Algorithm: k.alg, Public: pub}, nil
}

// Create generates a key for alg (signer.Ed25519 or
// signer.ECDSASecp256k1) and stores it under name, encrypted under the
// passphrase at the store's cost.
func (s *Store) Create(ctx context.Context, name string, alg signer.Algorithm, pass Passphrase) (signer.KeyInfo, error) {
	if err := s.checkFree(ctx, name); err != nil {
		return signer.KeyInfo{}, err
	}
	k, err := generate(alg)
	if err != nil {
		return signer.KeyInfo{}, err
	}
	defer k.wipe()
	return s.store(ctx, name, k, pass)
}

// ImportKey stores a copy of priv (ed25519.PrivateKey, or *ecdsa.PrivateKey
// on signer.Secp256k1()) under name, encrypted under the passphrase.
func (s *Store) ImportKey(ctx context.Context, name string, priv crypto.PrivateKey, pass Passphrase) (signer.KeyInfo, error) {
	return s.importKey(ctx, name, priv, 0, pass)
}

// importKey imports priv, which must be a key for alg unless alg is 0.
func (s *Store) importKey(ctx context.Context, name string, priv crypto.PrivateKey, alg signer.Algorithm, pass Passphrase) (signer.KeyInfo, error) {
	if alg != 0 && alg != signer.Ed25519 && alg != signer.ECDSASecp256k1 {
		return signer.KeyInfo{}, fmt.Errorf("keybase: gnokey keys are Ed25519 or secp256k1, not %v: %w", alg, signer.ErrUnsupported)
	}
	if err := s.checkFree(ctx, name); err != nil {
		return signer.KeyInfo{}, err
	}
	k, err := fromPrivate(priv)
	if err != nil {
		return signer.KeyInfo{}, err
	}
	defer k.wipe()
	if alg != 0 && k.alg != alg {
		return signer.KeyInfo{}, fmt.Errorf("keybase: a %v key cannot sign %v: %w", k.alg, alg, signer.ErrInvalidArgument)
	}
	return s.store(ctx, name, k, pass)
}

// Import stores an armored private key, as `gnokey export` writes it,
// under name. It decrypts the key with the passphrase first, to check it
// and to learn its public key. It stores the block armored as gnokey
// writes it: armor gnokey wrote is kept byte for byte (without any text
// around the block), so Export returns it unchanged; armor this package
// reads but gnokey would not (white space around the body lines) is
// stored re-armored, so that what Export returns imports into gnokey.
// Unencrypted armor needs Config.AllowUnencrypted.
func (s *Store) Import(ctx context.Context, name string, armor []byte, pass Passphrase) (signer.KeyInfo, error) {
	if err := s.checkFree(ctx, name); err != nil {
		return signer.KeyInfo{}, err
	}
	sealed, err := parsePrivateArmor(armor)
	if err != nil {
		return signer.KeyInfo{}, err
	}
	defer sealed.wipe()
	if sealed.plaintext && !s.cfg.AllowUnencrypted {
		return signer.KeyInfo{}, fmt.Errorf("keybase: the armor is unencrypted (set Config.AllowUnencrypted, or ImportKey it under a passphrase): %w", signer.ErrInvalidArgument)
	}
	k, err := unseal(ctx, sealed, pass)
	if err != nil {
		return signer.KeyInfo{}, err
	}
	defer k.wipe()
	armored := sealed.armor()
	defer clear(armored) // the key in base64, when unencrypted
	return s.storeArmor(ctx, name, k, armored)
}

// Export returns the armored private key of name, as stored: encrypted
// (the passphrase is not needed to export it, nor removed), readable by
// `gnokey import` when the key was encrypted at DefaultCost (a key keeps
// the cost it was imported with until ChangePassphrase re-encrypts it at
// the store's).
func (s *Store) Export(ctx context.Context, name string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("keybase: %w", err)
	}
	kf, err := s.read(name)
	if err != nil {
		return nil, err
	}
	defer kf.sealed.wipe()
	return kf.sealed.armor(), nil
}

// Info describes the key of name without its passphrase.
func (s *Store) Info(ctx context.Context, name string) (signer.KeyInfo, error) {
	if err := ctx.Err(); err != nil {
		return signer.KeyInfo{}, fmt.Errorf("keybase: %w", err)
	}
	kf, err := s.read(name)
	if err != nil {
		return signer.KeyInfo{}, err
	}
	kf.sealed.wipe()
	return signer.KeyInfo{Label: name, Algorithm: kf.alg, Public: kf.pub}, nil
}

// List describes every key, sorted by name, without passphrases. A key file
// that cannot be read is left out and reported in the error, which wraps
// each file's error; the keys that could be read are returned with it.
func (s *Store) List(ctx context.Context) ([]signer.KeyInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("keybase: %w", err)
	}
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("keybase: %w", err)
	}
	var out []signer.KeyInfo
	var errs []error
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), keySuffix)
		if !ok || CheckName(name) != nil {
			continue // the lock file, temporary files, anything else
		}
		kf, err := s.read(name)
		if errors.Is(err, signer.ErrKeyNotFound) {
			continue // deleted meanwhile
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		kf.sealed.wipe()
		out = append(out, signer.KeyInfo{Label: name, Algorithm: kf.alg, Public: kf.pub})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Label < out[j].Label })
	return out, errors.Join(errs...)
}

// Delete removes the key of name. Signers already open on it keep working.
func (s *Store) Delete(ctx context.Context, name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	unlock, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	err = os.Remove(s.path(name))
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("keybase: key %q: %w", name, signer.ErrKeyNotFound)
	}
	if err != nil {
		return fmt.Errorf("keybase: %w", err)
	}
	s.removeStaleTemps(name)
	if err := syncDir(s.dir); err != nil {
		return fmt.Errorf("keybase: key %q removed, but syncing the directory failed: %w", name, err)
	}
	return nil
}

// ChangePassphrase re-encrypts the key of name under newPass, at the
// store's cost. It asks for both passphrases first, then holds the
// store's lock while it reads, decrypts, re-encrypts and replaces the file
// (two key derivations, about half a second at DefaultCost), so no other
// writer can slip in between. A wrong old passphrase changes nothing and
// fails with an error wrapping signer.ErrWrongPassphrase.
func (s *Store) ChangePassphrase(ctx context.Context, name string, oldPass, newPass Passphrase) error {
	if err := CheckName(name); err != nil {
		return err
	}
	oldP, err := oldPass.get()
	if err != nil {
		return err
	}
	defer clear(oldP)
	newP, err := s.passphrase(newPass)
	if err != nil {
		return err
	}
	defer clear(newP)
	unlock, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	kf, err := s.read(name)
	if err != nil {
		return err
	}
	defer kf.sealed.wipe()
	k, err := unseal(ctx, kf.sealed, PassphraseBytes(oldP))
	if err != nil {
		return named(name, err)
	}
	defer k.wipe()
	if !equalPublic(k.public(), kf.pub) {
		return named(name, fmt.Errorf("keybase: the private key does not match the public key stored with it: %w", signer.ErrCorrupt))
	}
	armor, err := seal(ctx, k, newP, s.cfg.Cost, rand.Reader)
	if err != nil {
		return err
	}
	defer clear(armor) // the key in base64, when unencrypted
	data, err := keyFileBytes(kf.pub, armor)
	if err != nil {
		return err
	}
	defer clear(data)
	tmp, err := s.writeTemp(name, data)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	return s.rename(tmp, name, true)
}

// Open opens the key of name as a Signer in mode, decrypting it once with
// the passphrase (see OpenArmor). The key must match the public key stored
// with it, else the file is reported corrupt.
func (s *Store) Open(ctx context.Context, name string, pass Passphrase, mode Mode) (*Signer, error) {
	return s.open(ctx, name, 0, pass, mode)
}

// open opens the key of name, which must be a key for alg unless alg is 0;
// a key of another algorithm is refused before any key derivation.
func (s *Store) open(ctx context.Context, name string, alg signer.Algorithm, pass Passphrase, mode Mode) (*Signer, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("keybase: %w", err)
	}
	kf, err := s.read(name)
	if err != nil {
		return nil, err
	}
	if alg != 0 && kf.alg != alg {
		kf.sealed.wipe()
		return nil, fmt.Errorf("keybase: key %q is %v, not %v: %w", name, kf.alg, alg, signer.ErrInvalidArgument)
	}
	return newSigner(ctx, name, kf.sealed, kf.pub, pass, mode)
}
