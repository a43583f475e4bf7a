package signer

import (
	"bytes"
	"crypto/ed25519"
	"fmt"

	"filippo.io/edwards25519"
)

// CheckEd25519PublicKey checks that pub is an Ed25519 public key a signer
// may present: 32 bytes that encode, canonically, a point of the curve
// that is not of small order. crypto/ed25519 verifies without the
// cofactor and checks only the length, so a small-order key such as the
// identity point makes one constant signature "verify" for every message;
// a device or file that presents one is refused with an error wrapping
// ErrInvalidKey. Every backend checks the keys it reads with it, and so do
// Algorithm.CheckKey and Algorithm.Verify for Ed25519 and the secret
// connection's handshake for the peer's identity key.
func CheckEd25519PublicKey(pub []byte) error {
	if len(pub) != ed25519.PublicKeySize {
		return fmt.Errorf("signer: ed25519 public key of %d bytes, want %d: %w", len(pub), ed25519.PublicKeySize, ErrInvalidKey)
	}
	p, err := new(edwards25519.Point).SetBytes(pub)
	if err != nil {
		return fmt.Errorf("signer: ed25519 public key is not a point of the curve: %w", ErrInvalidKey)
	}
	if !bytes.Equal(p.Bytes(), pub) {
		return fmt.Errorf("signer: ed25519 public key is not canonically encoded: %w", ErrInvalidKey)
	}
	if new(edwards25519.Point).MultByCofactor(p).Equal(edwards25519.NewIdentityPoint()) == 1 {
		return fmt.Errorf("signer: ed25519 public key is of small order: %w", ErrInvalidKey)
	}
	return nil
}
