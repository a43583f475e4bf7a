package inprocess

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/signerkit/signerkit/signer"
)

// An inprocess: URI names a key file, and as a store (signer.OpenStore)
// it is that file: ImportKey writes it (WriteKeyFile: a new file, mode
// 0600) and ListKeys lists its key, if it exists. The label is the file
// name.
func init() {
	signer.RegisterStore("inprocess", func(ctx context.Context, uri string) (signer.Store, signer.KeyRef, error) {
		cfg, err := ParseURI(uri)
		if err != nil {
			return nil, signer.KeyRef{}, err
		}
		if err := ctx.Err(); err != nil {
			return nil, signer.KeyRef{}, err
		}
		return keyFileStore(cfg.File), signer.KeyRef{Label: filepath.Base(cfg.File), Algorithm: cfg.Key.Algorithm}, nil
	})
}

// keyFileStore is the store of one key file.
type keyFileStore string

var (
	_ signer.KeyImporter = keyFileStore("")
	_ signer.KeyLister   = keyFileStore("")
)

func (keyFileStore) Close() error { return nil }

// ImportKey writes priv to the file. The file must not exist; label must
// be empty or the file's name.
func (f keyFileStore) ImportKey(ctx context.Context, priv crypto.PrivateKey, alg signer.Algorithm, label string) (signer.KeyInfo, error) {
	if err := ctx.Err(); err != nil {
		return signer.KeyInfo{}, err
	}
	if label != "" && label != filepath.Base(string(f)) {
		return signer.KeyInfo{}, fmt.Errorf("inprocess: a key file's label is its name %q, not %q: %w", filepath.Base(string(f)), label, signer.ErrInvalidArgument)
	}
	if err := WriteKeyFile(string(f), priv); err != nil {
		return signer.KeyInfo{}, err
	}
	return f.info(priv, alg)
}

// ListKeys returns the file's key, or none when there is no file.
func (f keyFileStore) ListKeys(ctx context.Context) ([]signer.KeyInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	priv, err := LoadKeyFile(string(f))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, signer.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer wipePrivate(priv)
	info, err := f.info(priv, 0)
	if err != nil {
		return nil, err
	}
	return []signer.KeyInfo{info}, nil
}

func (f keyFileStore) info(priv crypto.PrivateKey, alg signer.Algorithm) (signer.KeyInfo, error) {
	s, ok := priv.(crypto.Signer)
	if !ok {
		return signer.KeyInfo{}, fmt.Errorf("inprocess: %T is not a private key: %w", priv, signer.ErrUnsupported)
	}
	return signer.KeyInfo{Label: filepath.Base(string(f)), Algorithm: algorithmFor(priv, alg), Public: s.Public()}, nil
}
