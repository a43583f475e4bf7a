package keybase

import (
	"context"
	"crypto"
	"fmt"

	"github.com/signerkit/signerkit/signer"
)

// Keys is a Store seen through signer's key store interfaces
// (signer.KeyGenerator, KeyImporter, KeyLister, KeyOpener, KeyDeleter),
// which take no passphrase: every key it writes or opens uses the one
// Passphrase it was made with, and it opens Signers in one Mode. Labels
// are key names; keys have no ID. It is safe for concurrent use.
type Keys struct {
	store *Store
	pass  Passphrase
	mode  Mode
}

var (
	_ signer.KeyGenerator = (*Keys)(nil)
	_ signer.KeyImporter  = (*Keys)(nil)
	_ signer.KeyLister    = (*Keys)(nil)
	_ signer.KeyOpener    = (*Keys)(nil)
	_ signer.KeyDeleter   = (*Keys)(nil)
)

// Keys returns the store seen through signer's key store interfaces, with
// pass for every key and Signers opened in mode.
func (s *Store) Keys(pass Passphrase, mode Mode) *Keys {
	return &Keys{store: s, pass: pass, mode: mode}
}

// GenerateKey creates a key (see Store.Create).
func (k *Keys) GenerateKey(ctx context.Context, alg signer.Algorithm, label string) (signer.KeyInfo, error) {
	return k.store.Create(ctx, label, alg, k.pass)
}

// ImportKey stores priv (see Store.ImportKey); alg, when set, must be the
// key's.
func (k *Keys) ImportKey(ctx context.Context, priv crypto.PrivateKey, alg signer.Algorithm, label string) (signer.KeyInfo, error) {
	return k.store.importKey(ctx, label, priv, alg, k.pass)
}

// ListKeys lists the keys (see Store.List).
func (k *Keys) ListKeys(ctx context.Context) ([]signer.KeyInfo, error) {
	return k.store.List(ctx)
}

// OpenKey opens the key ref.Label names (see Store.Open). A ref.Algorithm
// other than the key's is refused, before the key is derived. Keys have no
// ID: a ref with one finds nothing.
func (k *Keys) OpenKey(ctx context.Context, ref signer.KeyRef) (signer.Signer, error) {
	if err := k.check(ref); err != nil {
		return nil, err
	}
	s, err := k.store.open(ctx, ref.Label, ref.Algorithm, k.pass, k.mode)
	if err != nil {
		return nil, err // not a nil *Signer in a non-nil interface
	}
	return s, nil
}

// DeleteKey removes the key ref.Label names (see Store.Delete).
func (k *Keys) DeleteKey(ctx context.Context, ref signer.KeyRef) error {
	if err := k.check(ref); err != nil {
		return err
	}
	return k.store.Delete(ctx, ref.Label)
}

func (k *Keys) check(ref signer.KeyRef) error {
	switch {
	case ref.ID != "":
		return fmt.Errorf("keybase: key %v: keys have no id: %w", ref, signer.ErrKeyNotFound)
	case ref.Label == "":
		return fmt.Errorf("keybase: a key reference needs a label: %w", signer.ErrInvalidArgument)
	}
	return nil
}
