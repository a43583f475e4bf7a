package signer

import (
	"errors"
	"fmt"
)

// BLSPublicKey is a BLS12-381 public key, as package bls makes them
// (*bls.PublicKey). Package signer does no pairing arithmetic itself, so
// that it needs neither cgo nor a pairing library: for BLS12381MinPK and
// BLS12381MinSig, CheckKey accepts a key that implements BLSPublicKey and
// names that algorithm, and Verify asks the key to check the signature.
// The key's own package is what vouches for it; parse keys that come from
// outside with bls.ParsePublicKey, which refuses points off the curve,
// outside the prime-order subgroup or at infinity.
//
// Its methods must be safe on a nil receiver (a nil key names no valid
// algorithm and verifies nothing).
type BLSPublicKey interface {
	// Algorithm returns BLS12381MinPK or BLS12381MinSig.
	Algorithm() Algorithm
	// Bytes returns the key's serialized (uncompressed) form.
	Bytes() []byte
	// VerifySignature checks sig, in the wire form SignContext returns
	// for the key's algorithm, over msg with the algorithm's DST. It
	// returns nil for a valid signature and an error wrapping
	// ErrInvalidSignature otherwise.
	VerifySignature(msg, sig []byte) error
}

// blsKeyAlgorithm returns the algorithm a BLS key names, if it is one of
// the BLS algorithms.
func blsKeyAlgorithm(k BLSPublicKey) (Algorithm, bool) {
	if k == nil {
		return 0, false
	}
	a := k.Algorithm()
	return a, a.IsBLS()
}

// verifyBLS checks a BLS signature through the key's VerifySignature. The
// key's algorithm has been checked against a by CheckKey.
func verifyBLS(a Algorithm, k BLSPublicKey, msg, sig []byte) error {
	err := k.VerifySignature(msg, sig)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrInvalidSignature), errors.Is(err, ErrUnsupported):
		return fmt.Errorf("signer: %v: %w", a, err)
	}
	return fmt.Errorf("signer: %v signature does not verify: %w: %w", a, ErrInvalidSignature, err)
}
