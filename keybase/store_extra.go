package keybase

import (
	"context"
	"crypto/rand"
	"fmt"

	"github.com/signerkit/signerkit/signer"
)

// The Store's methods beyond signer's key store interfaces: gnokey's
// import, export and passphrase change, and one key's description.

// ImportArmor stores an armored private key, as `gnokey export` writes it,
// under label. It decrypts the key with the store's Secret first, to check
// it and to learn its public key, and stores the block as it was
// encrypted, so the key keeps the armor's passphrase and cost. Armor
// gnokey wrote is kept byte for byte (without any text around the block),
// so ExportArmor returns it unchanged; armor this package reads but gnokey
// would not (white space around the body lines) is stored re-armored, so
// that what ExportArmor returns imports into gnokey. Unencrypted armor
// needs Config.AllowUnencrypted.
func (s *Store) ImportArmor(ctx context.Context, armor []byte, label string) (signer.KeyInfo, error) {
	if err := s.checkFree(ctx, label); err != nil {
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
	k, err := unseal(ctx, sealed, s.cfg.Secret)
	if err != nil {
		return signer.KeyInfo{}, named(label, err)
	}
	defer k.wipe()
	armored := sealed.armor()
	defer clear(armored) // the key in base64, when unencrypted
	return s.storeArmor(ctx, label, k, armored)
}

// ExportArmor returns the armored private key of label, as stored:
// encrypted (no passphrase is needed to export it, nor removed), readable
// by `gnokey import` when the key was encrypted at DefaultCost (a key
// keeps the cost it was imported with until ChangePassphrase re-encrypts
// it at the store's).
func (s *Store) ExportArmor(ctx context.Context, label string) ([]byte, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	kf, err := s.read(ctx, label)
	if err != nil {
		return nil, err
	}
	defer kf.sealed.wipe()
	return kf.sealed.armor(), nil
}

// KeyInfo describes the key of label without decrypting it. label is a
// name or a gno.land address, as in OpenKey; the KeyInfo's Label is the
// key's name. Address(info.Public) is its address.
func (s *Store) KeyInfo(ctx context.Context, label string) (signer.KeyInfo, error) {
	if err := s.check(ctx); err != nil {
		return signer.KeyInfo{}, err
	}
	name, err := s.resolve(ctx, label)
	if err != nil {
		return signer.KeyInfo{}, err
	}
	kf, err := s.read(ctx, name)
	if err != nil {
		return signer.KeyInfo{}, err
	}
	kf.sealed.wipe()
	return signer.KeyInfo{Label: name, Algorithm: kf.alg, Public: kf.pub}, nil
}

// ChangePassphrase re-encrypts the key of label, which the store's Secret
// opens, under the passphrase newSecret gives, at the store's Cost. It
// asks for both passphrases first, then holds the store's lock while it
// reads, decrypts, re-encrypts and replaces the file (two key derivations,
// about half a second at DefaultCost), so no other writer can slip in
// between. A wrong old passphrase changes nothing and fails with a
// *PassphraseError (signer.ErrWrongPassphrase). From then on the key opens with
// newSecret only, in a Store configured with it.
func (s *Store) ChangePassphrase(ctx context.Context, label string, newSecret signer.Secret) error {
	if err := s.checkExists(ctx, label); err != nil {
		return err
	}
	oldP, err := passphrase(s.cfg.Secret)
	if err != nil {
		return err
	}
	defer clear(oldP)
	newP, err := s.passphrase(newSecret)
	if err != nil {
		return err
	}
	defer clear(newP)
	unlock, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	kf, err := s.read(ctx, label)
	if err != nil {
		return err
	}
	defer kf.sealed.wipe()
	k, err := unseal(ctx, kf.sealed, signer.SecretBytes(oldP))
	if err != nil {
		return named(label, err)
	}
	defer k.wipe()
	if !equalPublic(k.public(), kf.pub) {
		return named(label, fmt.Errorf("keybase: the private key does not match the public key stored with it: %w", signer.ErrCorrupt))
	}
	armor, err := seal(ctx, k, newP, s.cfg.Cost, rand.Reader)
	if err != nil {
		return err
	}
	defer clear(armor) // the key in base64, when unencrypted
	data, err := keyFileBytes(kf.pub, label, armor)
	if err != nil {
		return err
	}
	defer clear(data)
	tmp, err := s.writeTemp(label, data)
	if err != nil {
		return err
	}
	defer tmp.Remove()
	return s.rename(tmp, label, true)
}
