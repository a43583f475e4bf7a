package keybase

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

	"github.com/signerkit/signerkit/internal/keyuri"
	"github.com/signerkit/signerkit/signer"
)

// Config says where a store's keys are, how to unlock them, and which key
// Open opens. The zero value of each field but Dir is a documented default;
// with Secret set it reads and writes gnokey-compatible keys.
type Config struct {
	// Dir is the key directory (required). OpenStore does not create it:
	// a missing directory holds no keys until the first key is written,
	// which creates it with mode 0700.
	Dir string
	// Secret gives the passphrase that keys are encrypted under and opened
	// with. It is called when a key is written or opened (and, in PerSign
	// mode, on every sign), and what it returns is wiped once the key is
	// derived. Nil means no passphrase, so nothing can be written or opened
	// (ListKeys, KeyInfo and ExportArmor need none).
	Secret signer.Secret
	// Mode is when Signers opened from the store decrypt their key:
	// UnlockOnce (the zero value) or PerSign.
	Mode Mode
	// Key is the key Open opens: Key.Label is its name or its gno.land
	// address (required; see Store.OpenKey). Keys
	// have no ID, so Key.ID must be empty; Key.Algorithm, when set, must be
	// the key's, checked before the key is derived. OpenStore ignores Key.
	Key signer.KeyRef
	// Cost is the bcrypt cost of the keys the store encrypts; 0 means
	// DefaultCost (12). gnokey reads only cost 12: keys written at another
	// cost carry a "cost" header that gnokey ignores, so it refuses them as
	// a wrong passphrase. Lower costs are for tests. Keys are read at the
	// cost they were written with, whatever this says.
	Cost int
	// AllowUnencrypted lets the store write keys under an empty
	// passphrase, which gnokey stores unencrypted (protected by the file's
	// mode alone), and import unencrypted armor. By default both are
	// refused.
	AllowUnencrypted bool
}

// Open opens the key cfg.Key names in the store cfg describes, as OpenStore
// and Store.OpenKey do, decrypting it with cfg.Secret. The Signer holds
// nothing of the store: its Close wipes the key.
func Open(ctx context.Context, cfg Config) (*Signer, error) {
	if cfg.Key.Label == "" {
		return nil, fmt.Errorf("keybase: Config.Key.Label names no key: %w", signer.ErrInvalidArgument)
	}
	s, err := OpenStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if err := checkRef(cfg.Key); err != nil {
		return nil, err
	}
	name, err := s.resolve(ctx, cfg.Key.Label)
	if err != nil {
		return nil, err
	}
	return s.open(ctx, name, cfg.Key.Algorithm)
}

// OpenStore returns the Store of the key directory cfg.Dir. It creates
// nothing: a missing directory is an empty store, which its first
// GenerateKey, ImportKey or ImportArmor creates with mode 0700. A path
// that is not a directory is refused with a *FileError wrapping
// signer.ErrInvalidArgument; a symbolic link to a directory (the path's
// last element), a directory owned by another user than the process's
// effective user (on Unix; elsewhere ownership is not checked) and one
// that other users can read or enter (except on Windows, where modes say
// nothing) with a *FileError wrapping signer.ErrPermissionDenied. Every
// later read and write checks the directory again. Config values out of
// range (Cost, Mode) wrap signer.ErrInvalidArgument.
func OpenStore(ctx context.Context, cfg Config) (*Store, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("keybase: %w", err)
	}
	if cfg.Dir == "" {
		return nil, fmt.Errorf("keybase: Config.Dir names no directory: %w", signer.ErrInvalidArgument)
	}
	if cfg.Cost == 0 {
		cfg.Cost = DefaultCost
	}
	if cfg.Cost < MinCost || cfg.Cost > MaxCost {
		return nil, fmt.Errorf("keybase: bcrypt cost %d, want %d to %d: %w", cfg.Cost, MinCost, MaxCost, signer.ErrInvalidArgument)
	}
	if cfg.Mode != UnlockOnce && cfg.Mode != PerSign {
		return nil, fmt.Errorf("keybase: unknown mode %v: %w", cfg.Mode, signer.ErrInvalidArgument)
	}
	if _, err := checkDir(cfg.Dir); err != nil {
		return nil, err
	}
	return &Store{dir: cfg.Dir, cfg: cfg, sema: make(chan struct{}, 1)}, nil
}

// checkDir checks the key directory, if it exists: a directory, not a
// symbolic link to one (the last element of the path; the store does not
// follow it), owned by the process's effective user (on Unix) and of its
// owner's alone (not on Windows, where modes say nothing).
func checkDir(dir string) (exists bool, err error) {
	dir = filepath.Clean(dir) // "link/" would resolve the link
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("keybase: %w", err)
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return false, &FileError{Path: dir, Problem: FileSymlink, Detail: "give the directory's own path"}
	case !fi.IsDir():
		return false, &FileError{Path: dir, Problem: FileNotDirectory}
	}
	if err := checkOwner(dir, fi); err != nil {
		return false, err
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return false, &FileError{Path: dir, Problem: FileOpenToOthers, Detail: fmt.Sprintf("mode %v; chmod 700 it", fi.Mode().Perm())}
	}
	return true, nil
}

// ensureDir creates the key directory, mode 0700, if it does not exist
// yet: before the first write.
func (s *Store) ensureDir() error {
	exists, err := checkDir(s.dir)
	if err != nil || exists {
		return err
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("keybase: creating the key directory: %w", err)
	}
	_, err = checkDir(s.dir)
	return err
}

// The attributes of a keybase: URI.
const (
	attrDir   = "dir"
	attrLabel = "label"
	attrMode  = keyuri.AttrMode
)

// ParseURI returns the Config that a keybase: URI describes:
//
//	keybase:dir=/var/lib/gnokey;label=validator?pin-source=env:GNOKEY_PASS
//	keybase:dir=/var/lib/gnokey;label=validator?pin-source=/run/secrets/pass&mode=per-sign
//
// Path attributes: dir, the key directory, and label, the key's name or
// its gno.land address, "g1…", looked up as Store.OpenKey does (both
// required). Query attributes: pin-source or pin-value for the passphrase
// (see signer.URI; it sets Config.Secret), and mode, unlock-once (the
// default) or per-sign. Errors are *signer.URIError values that name the
// attribute at fault and never quote a pin-value.
func ParseURI(uri string) (Config, error) {
	u, err := keyuri.Parse(uri, "keybase", attrDir, attrLabel)
	if err != nil {
		return Config{}, err
	}
	var cfg Config
	if cfg.Dir, _ = u.Attr(attrDir); cfg.Dir == "" {
		return Config{}, u.Errorf(attrDir, "is required: the key directory")
	}
	label, ok := u.Attr(attrLabel)
	switch {
	case !ok || label == "":
		return Config{}, u.Errorf(attrLabel, "is required: the key's name")
	case CheckName(label) != nil:
		// Not quoted: a label=pin-value=… typo would show the PIN.
		return Config{}, u.Errorf(attrLabel, "not a key name: want 1 to %d bytes", MaxName)
	}
	cfg.Key.Label = label
	if cfg.Mode, err = ParseModeAttr(u); err != nil {
		return Config{}, err
	}
	if cfg.Secret, err = u.Secret(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// ParseModeAttr reads the optional query attribute mode (unlock-once or
// per-sign) of a URI whose scheme signs with keybase keys, as keybase: and
// gnokeyhome: do. Absent, it is UnlockOnce.
func ParseModeAttr(u *signer.URI) (Mode, error) {
	m, ok := u.Attr(attrMode)
	if !ok {
		return UnlockOnce, nil
	}
	switch m {
	case UnlockOnce.String():
		return UnlockOnce, nil
	case PerSign.String():
		return PerSign, nil
	}
	if pinBefore(u, attrMode) {
		// This "mode" may be the tail of an unescaped PIN: say nothing of
		// it, as signer.URI.Allow says nothing of unknown attributes after
		// a pin-value.
		return 0, u.Errorf(signer.AttrPINValue, "followed by an attribute that is not valid (escape '&' and ';' in a PIN as %%26 and %%3B)")
	}
	return 0, u.Errorf(attrMode, "want unlock-once or per-sign")
}

// pinBefore reports whether a pin-value comes before the query attribute
// name in u.
func pinBefore(u *signer.URI, name string) bool {
	for _, a := range u.Query {
		switch a.Name {
		case signer.AttrPINValue:
			return true
		case name:
			return false
		}
	}
	return false
}

func init() {
	signer.Register("keybase", func(ctx context.Context, uri string, secret signer.Secret) (signer.Signer, error) {
		cfg, err := ParseURI(uri)
		if err != nil {
			return nil, err
		}
		if cfg.Secret == nil {
			cfg.Secret = secret
		}
		s, err := Open(ctx, cfg)
		if err != nil {
			return nil, err // not a nil *Signer in a non-nil interface
		}
		return s, nil
	})
}
