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
	"sort"
	"strings"
	"sync/atomic"

	"github.com/signerkit/signerkit/internal/atomicfile"
	"github.com/signerkit/signerkit/signer"
)

// Store is a directory of named gnokey keys, one file each (see the
// package doc for the file format), opened by OpenStore. It implements
// signer's key store interfaces (signer.KeyGenerator, KeyImporter,
// KeyLister, KeyOpener and KeyDeleter): labels are key names, and keys have
// no ID. Every key it writes is encrypted under its Config's Secret at its
// Cost, and every Signer it opens decrypts with that Secret in its Mode.
//
// A Store is safe for concurrent use, and on Linux, macOS and the BSDs so
// are several Stores on one directory, in one process or several: writers
// take a lock file (flock(2)). Elsewhere only the writers of one Store are
// serialised. Every file is replaced whole by an atomic rename.
type Store struct {
	dir    string
	cfg    Config
	sema   chan struct{} // this Store's writers, before the lock file
	closed atomic.Bool
}

var (
	_ signer.KeyGenerator = (*Store)(nil)
	_ signer.KeyImporter  = (*Store)(nil)
	_ signer.KeyLister    = (*Store)(nil)
	_ signer.KeyOpener    = (*Store)(nil)
	_ signer.KeyDeleter   = (*Store)(nil)
)

const (
	keySuffix = ".key"
	lockName  = ".lock"
)

var errStoreClosed = fmt.Errorf("keybase: store: %w", signer.ErrClosed)

// check fails once the store is closed or ctx is done.
func (s *Store) check(ctx context.Context) error {
	if s.closed.Load() {
		return errStoreClosed
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("keybase: %w", err)
	}
	return nil
}

// Close closes the store: its methods fail with signer.ErrClosed from then
// on. It holds no file or key open, so there is nothing else to release;
// Signers it opened keep working until they are closed. Close is
// idempotent.
func (s *Store) Close() error {
	s.closed.Store(true)
	return nil
}

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

// path is the file of name, which CheckName takes (see KeyFileName).
func (s *Store) path(name string) string { return filepath.Join(s.dir, fileStem(name)+keySuffix) }

// checkFree fails early, before any key derivation, when name is taken.
func (s *Store) checkFree(ctx context.Context, name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if err := s.check(ctx); err != nil {
		return err
	}
	if _, err := os.Lstat(s.path(name)); err == nil {
		return fmt.Errorf("keybase: key %q: %w", name, signer.ErrKeyExists)
	}
	return nil
}

// checkExists fails early, before taking the lock (and so before anything
// is created), when name has no key file.
func (s *Store) checkExists(ctx context.Context, name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if err := s.check(ctx); err != nil {
		return err
	}
	if _, err := os.Lstat(s.path(name)); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("keybase: key %q: %w", name, signer.ErrKeyNotFound)
	}
	return nil
}

// passphrase gets a passphrase for writing a key from secret.
func (s *Store) passphrase(secret signer.Secret) ([]byte, error) {
	p, err := passphrase(secret)
	if err != nil {
		return nil, err
	}
	if len(p) == 0 && !s.cfg.AllowUnencrypted {
		return nil, fmt.Errorf("keybase: empty passphrase: the key would be stored unencrypted (set Config.AllowUnencrypted to allow it): %w", signer.ErrInvalidArgument)
	}
	return p, nil
}

// store encrypts k under the store's secret and writes it as a new key.
func (s *Store) store(ctx context.Context, name string, k *privateKey) (signer.KeyInfo, error) {
	p, err := s.passphrase(s.cfg.Secret)
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
	if err := checkPublic(pub); err != nil {
		return signer.KeyInfo{}, err
	}
	data, err := keyFileBytes(pub, name, armor)
	if err != nil {
		return signer.KeyInfo{}, err
	}
	defer clear(data)
	if err := s.put(ctx, name, data, false); err != nil {
		return signer.KeyInfo{}, err
	}
	return signer.KeyInfo{Label: name, Algorithm: k.alg, Public: pub}, nil
}

// GenerateKey creates a key for alg (signer.Ed25519 or
// signer.ECDSASecp256k1) and stores it under label, encrypted under the
// store's Secret at its Cost. The first key written creates the directory.
func (s *Store) GenerateKey(ctx context.Context, alg signer.Algorithm, label string) (signer.KeyInfo, error) {
	if err := s.checkFree(ctx, label); err != nil {
		return signer.KeyInfo{}, err
	}
	k, err := generate(alg)
	if err != nil {
		return signer.KeyInfo{}, err
	}
	defer k.wipe()
	return s.store(ctx, label, k)
}

// ImportKey stores a copy of priv (an ed25519.PrivateKey, or an
// *ecdsa.PrivateKey on signer.Secp256k1()) under label, encrypted under
// the store's Secret. alg, when set, must be the key's algorithm.
func (s *Store) ImportKey(ctx context.Context, priv crypto.PrivateKey, alg signer.Algorithm, label string) (signer.KeyInfo, error) {
	if alg != 0 && alg != signer.Ed25519 && alg != signer.ECDSASecp256k1 {
		return signer.KeyInfo{}, fmt.Errorf("keybase: gnokey keys are Ed25519 or secp256k1, not %v: %w", alg, signer.ErrUnsupported)
	}
	if err := s.checkFree(ctx, label); err != nil {
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
	return s.store(ctx, label, k)
}

// ListKeys describes every key, sorted by label, without decrypting any. A
// missing directory holds no keys. A key file that cannot be read (a
// symbolic link, a FIFO or anything else not a regular file, a garbled
// file) is left out and reported in the error, which wraps each file's
// error; the keys that could be read are returned with it. Once ctx is
// done ListKeys returns its error alone, even from a hung read.
func (s *Store) ListKeys(ctx context.Context) ([]signer.KeyInfo, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	if exists, err := checkDir(s.dir); err != nil || !exists {
		return nil, err
	}
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("keybase: %w", err)
	}
	var out []signer.KeyInfo
	var errs []error
	for _, e := range entries {
		stem, ok := strings.CutSuffix(e.Name(), keySuffix)
		if !ok {
			continue // the lock file, temporary files, anything else
		}
		if _, _, ok := nameOfStem(stem); !ok {
			continue // no name's file (see KeyFileName)
		}
		if err := s.check(ctx); err != nil {
			return nil, err
		}
		kf, err := s.readStem(ctx, stem)
		if errors.Is(err, signer.ErrKeyNotFound) {
			continue // deleted meanwhile
		}
		if err != nil && ctx.Err() != nil {
			return nil, fmt.Errorf("keybase: %w", ctx.Err())
		}
		if err != nil {
			errs = append(errs, stemError(stem, err))
			continue
		}
		kf.sealed.wipe()
		out = append(out, signer.KeyInfo{Label: kf.name, Algorithm: kf.alg, Public: kf.pub})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Label < out[j].Label })
	return out, errors.Join(errs...)
}

// OpenKey opens the key ref.Label names as a *Signer in the store's Mode,
// decrypting it once with the store's Secret (see OpenArmor). The key must
// match the public key stored with it, else the file is reported corrupt.
// A ref.Algorithm other than the key's is refused before the key is
// derived; keys have no ID, so a ref with one finds nothing.
//
// ref.Label is a key's name or, as with gnokey, its gno.land address
// ("g1…", see Address): a label that parses as an address selects the
// key of that address (the first by name, if several have it), and only
// when none has it, the key of that name.
func (s *Store) OpenKey(ctx context.Context, ref signer.KeyRef) (signer.Signer, error) {
	if err := checkRef(ref); err != nil {
		return nil, err
	}
	name, err := s.resolve(ctx, ref.Label)
	if err != nil {
		return nil, err
	}
	k, err := s.open(ctx, name, ref.Algorithm)
	if err != nil {
		return nil, err // not a nil *Signer in a non-nil interface
	}
	return k, nil
}

// open opens the key of name, which must be a key for alg unless alg is 0;
// a key of another algorithm is refused before any key derivation.
func (s *Store) open(ctx context.Context, name string, alg signer.Algorithm) (*Signer, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	kf, err := s.read(ctx, name)
	if err != nil {
		return nil, err
	}
	if alg != 0 && kf.alg != alg {
		kf.sealed.wipe()
		return nil, fmt.Errorf("keybase: key %q is %v, not %v: %w", name, kf.alg, alg, signer.ErrInvalidArgument)
	}
	return newSigner(ctx, name, kf.sealed, kf.pub, s.cfg.Secret, s.cfg.Mode)
}

// DeleteKey removes the key ref.Label names, and every temporary copy of
// it that a writer which crashed between writing and renaming left
// behind. Signers already open on it keep working.
func (s *Store) DeleteKey(ctx context.Context, ref signer.KeyRef) error {
	if err := checkRef(ref); err != nil {
		return err
	}
	name := ref.Label
	if err := s.checkExists(ctx, name); err != nil {
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
	s.removeTemps(name, 0) // a crashed writer's copies, however fresh
	if err := atomicfile.SyncDir(s.dir); err != nil {
		return fmt.Errorf("keybase: key %q removed, but syncing the directory failed: %w", name, err)
	}
	return nil
}

// checkRef checks a reference to a key of a store: a label, no ID.
func checkRef(ref signer.KeyRef) error {
	switch {
	case ref.ID != "":
		return fmt.Errorf("keybase: key %v: keys have no id: %w", ref, signer.ErrKeyNotFound)
	case ref.Label == "":
		return fmt.Errorf("keybase: a key reference needs a label: %w", signer.ErrInvalidArgument)
	}
	return nil
}
