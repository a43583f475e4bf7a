// Package eckey is the one place in this module that reads or sets the
// fields of crypto/ecdsa keys that Go 1.26 deprecated: PublicKey.X and
// PublicKey.Y, and PrivateKey.D.
//
// crypto/ecdsa's replacements (PublicKey.Bytes, ParseUncompressedPublicKey,
// PrivateKey.Bytes, ParseRawPrivateKey) know only the NIST curves, so a
// secp256k1 key, an *ecdsa.PublicKey on signer.Secp256k1(), has no way in
// or out but its fields. Code that handles only P-256 or P-384 keys uses
// those replacements directly; code that handles secp256k1 keys, or keys
// of any curve (copies, checks of a caller's key, whose fields may be
// nil, which the replacements do not survive), or builds malformed keys
// in tests, calls this package.
//
// Two uses on NIST keys are deliberate. Clone copies a key field by
// field, valid or not: a copy changes no key and computes nothing with
// its values. And code that hands a caller's P-256 or P-384 scalar to a
// device reads it with Scalar into a buffer of its own, which it wipes:
// in Go 1.26, PrivateKey.Bytes returns the slice of crypto/ecdsa's cached
// copy of the key, which its owner may be signing with, so it is neither
// the caller's to wipe nor safe to leave unwiped as a copy of its own.
//
// Nothing here checks a key: a key is read and built as given, nil fields
// included. Callers check what they take.
package eckey

//lint:file-ignore SA1019 this package is where the module reads and sets ecdsa's X, Y and D, which secp256k1 keys need (crypto/ecdsa's Bytes and Parse functions take NIST curves only); see the package doc

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"math/big"
)

// Coordinates returns pub's affine coordinates: the key's own values, not
// copies, nil when unset or when pub is nil.
func Coordinates(pub *ecdsa.PublicKey) (x, y *big.Int) {
	if pub == nil {
		return nil, nil
	}
	return pub.X, pub.Y
}

// NewPublic returns the public key (x, y) on curve. It holds x and y, not
// copies, and does not check that they are a point of the curve.
func NewPublic(curve elliptic.Curve, x, y *big.Int) *ecdsa.PublicKey {
	return &ecdsa.PublicKey{Curve: curve, X: x, Y: y}
}

// Clone returns a copy of pub that shares no memory with it (the curve
// aside), nil coordinates staying nil.
func Clone(pub *ecdsa.PublicKey) *ecdsa.PublicKey {
	return NewPublic(pub.Curve, clone(pub.X), clone(pub.Y))
}

func clone(v *big.Int) *big.Int {
	if v == nil {
		return nil
	}
	return new(big.Int).Set(v)
}

// Scalar returns priv's private scalar: the key's own value, not a copy,
// nil when unset or when priv is nil. A caller that wipes it wipes the
// key.
func Scalar(priv *ecdsa.PrivateKey) *big.Int {
	if priv == nil {
		return nil
	}
	return priv.D
}

// NewPrivate returns the private key of scalar d whose public key is a
// copy of *pub (which shares pub's coordinates). It holds d, not a copy,
// and does not check that d is pub's scalar.
func NewPrivate(pub *ecdsa.PublicKey, d *big.Int) *ecdsa.PrivateKey {
	return &ecdsa.PrivateKey{PublicKey: *pub, D: d}
}
