package inprocess

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"

	"github.com/signerkit/signerkit/internal/atomicfile"
	"github.com/signerkit/signerkit/signer"
)

var _ signer.KeyGenerator = keyFileStore("")

// GenerateKey makes a new Ed25519, P-256 or P-384 key and writes it to the
// file as ImportKey does (WriteKeyFile: a new file, mode 0600, written
// atomically); the file must not exist. label must be empty or the file's
// name.
func (f keyFileStore) GenerateKey(ctx context.Context, alg signer.Algorithm, label string) (signer.KeyInfo, error) {
	if err := ctx.Err(); err != nil {
		return signer.KeyInfo{}, err
	}
	if label != "" && label != filepath.Base(string(f)) {
		return signer.KeyInfo{}, fmt.Errorf("inprocess: a key file's label is its name %q, not %q: %w", filepath.Base(string(f)), label, signer.ErrInvalidArgument)
	}
	var priv crypto.PrivateKey
	var err error
	switch alg {
	case signer.Ed25519:
		_, priv, err = ed25519.GenerateKey(rand.Reader)
	case signer.ECDSAP256:
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case signer.ECDSAP384:
		priv, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	default:
		return signer.KeyInfo{}, fmt.Errorf("inprocess: generating %v key files: %w", alg, signer.ErrUnsupported)
	}
	if err != nil {
		return signer.KeyInfo{}, err
	}
	defer wipePrivate(priv)
	if err := WriteKeyFile(string(f), priv); err != nil {
		return signer.KeyInfo{}, err
	}
	return f.info(priv, alg)
}

var _ signer.KeyDeleter = keyFileStore("")

// DeleteKey removes the key file; ref.Label, when set, must be its name.
// The file is removed, not overwritten: a copy a backup or the file
// system kept stays.
func (f keyFileStore) DeleteKey(ctx context.Context, ref signer.KeyRef) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if ref.Label != "" && ref.Label != filepath.Base(string(f)) {
		return fmt.Errorf("inprocess: a key file's label is its name %q, not %q: %w", filepath.Base(string(f)), ref.Label, signer.ErrInvalidArgument)
	}
	priv, err := LoadKeyFile(string(f)) // only to check it is a key file
	if err != nil {
		return err
	}
	wipePrivate(priv)
	if err := os.Remove(string(f)); err != nil {
		return fmt.Errorf("inprocess: %w", err)
	}
	return atomicfile.SyncDir(filepath.Dir(string(f)))
}
