package signer

import (
	"context"
	"crypto"
	"strconv"
	"strings"
)

// KeyInfo describes a key that a backend holds, without its private half.
type KeyInfo struct {
	// Label is the name the backend knows the key by: a key file's name, a
	// PKCS#11 CKA_LABEL, a YubiHSM object label. On some devices labels
	// need not be unique, or may be empty.
	Label string
	// ID is the backend's own identifier, if it has one (a PKCS#11 CKA_ID
	// or a YubiHSM object id, in lower-case hex); it may be empty.
	ID string
	// Algorithm is what a Signer opened on the key uses by default. An RSA
	// key's stored form names no scheme: stores report RSAPKCS1v15 unless
	// they know better, and KeyRef.Algorithm picks the other.
	Algorithm Algorithm
	Public    crypto.PublicKey
}

// Ref returns the reference that opens this key: its ID when it has one
// (unique on every device), else its label.
func (k KeyInfo) Ref() KeyRef {
	if k.ID != "" {
		return KeyRef{ID: k.ID}
	}
	return KeyRef{Label: k.Label}
}

// KeyRef names a key in a store by Label, by ID, or by both, in which case
// both must match. A label that names more than one key is an error
// wrapping ErrInvalidArgument: use the ID. Algorithm, when set, is the
// algorithm the opened Signer uses; it must fit the key, and is how an RSA
// key is opened for PSS.
type KeyRef struct {
	Label     string
	ID        string
	Algorithm Algorithm
}

// String describes r for messages, e.g. `"validator" id 0a01 as rsa-pss`.
func (r KeyRef) String() string {
	var parts []string
	if r.Label != "" || r.ID == "" {
		parts = append(parts, strconv.Quote(r.Label))
	}
	if r.ID != "" {
		parts = append(parts, "id "+r.ID)
	}
	if r.Algorithm != 0 {
		parts = append(parts, "as "+r.Algorithm.String())
	}
	return strings.Join(parts, " ")
}

// The interfaces below are abilities of a key store — a keybase directory,
// a token, an HSM — that a backend offers on its store type when the
// device allows; callers find them by type assertion. Labels are matched
// exactly. Errors wrap ErrKeyExists (a label or id taken), ErrKeyNotFound,
// ErrInvalidArgument (a label the store cannot take, an ambiguous one),
// ErrUnsupported (an algorithm it cannot hold) or ErrPermissionDenied.

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
	OpenKey(ctx context.Context, ref KeyRef) (Signer, error)
}

// KeyDeleter removes a key from the store (ref.Algorithm is ignored).
// Signers already open on it may fail from then on.
type KeyDeleter interface {
	DeleteKey(ctx context.Context, ref KeyRef) error
}
