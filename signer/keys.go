package signer

import (
	"context"
	"crypto"
)

// KeyInfo describes a key that a backend holds, without its private half.
type KeyInfo struct {
	// Label is the name the backend knows the key by: a key file's name, a
	// PKCS#11 CKA_LABEL, a YubiHSM object label.
	Label string
	// ID is the backend's own identifier, if it has one (a PKCS#11 CKA_ID
	// or a YubiHSM object id, in hex); it may be empty.
	ID        string
	Algorithm Algorithm
	Public    crypto.PublicKey
}

// The interfaces below are abilities of a key store — a keybase directory,
// a token, an HSM — that a backend offers on its store type when the
// device allows; callers find them by type assertion. Labels are matched
// exactly. Errors wrap ErrKeyExists, ErrKeyNotFound, ErrInvalidArgument
// (a label the store cannot take), ErrUnsupported (an algorithm it cannot
// hold) or ErrPermissionDenied.

// KeyGenerator creates keys inside the store, where the device allows, so
// the private key never leaves it.
type KeyGenerator interface {
	GenerateKey(ctx context.Context, alg Algorithm, label string) (KeyInfo, error)
}

// KeyImporter puts an existing private key into the store (an
// ed25519.PrivateKey, *ecdsa.PrivateKey or *rsa.PrivateKey; for RSA, alg
// says which scheme SignContext will use).
type KeyImporter interface {
	ImportKey(ctx context.Context, priv crypto.PrivateKey, alg Algorithm, label string) (KeyInfo, error)
}

// KeyLister lists the store's keys, sorted by label, without unlocking
// them.
type KeyLister interface {
	ListKeys(ctx context.Context) ([]KeyInfo, error)
}

// KeyOpener opens a key of the store as a Signer; the caller closes it.
type KeyOpener interface {
	OpenKey(ctx context.Context, label string) (Signer, error)
}

// KeyDeleter removes a key from the store. Signers already open on it may
// fail from then on.
type KeyDeleter interface {
	DeleteKey(ctx context.Context, label string) error
}
