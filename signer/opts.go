package signer

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rsa"
	"fmt"
)

// CheckSignerOpts validates a crypto.Signer.Sign request for a key of
// algorithm a, for backends that implement Sign. It does not sign.
//
// For Ed25519 it accepts only pure Ed25519 (opts.HashFunc() == 0, or
// *ed25519.Options with Hash 0 and no Context) and returns an error
// wrapping ErrUnsupported for Ed25519ph and Ed25519ctx, which devices do not
// offer; a backend that can make them checks for them before calling this.
// For ECDSA and RSA it requires opts to name a hash and digest to be as long
// as that hash, and returns an error wrapping ErrInvalidMessage otherwise;
// a hash outside SHA-2 and SHA-3 (SHA-1, MD5) gets one wrapping
// ErrUnsupported. For BLS it accepts only opts.HashFunc() == 0: the
// message itself, which BLS hashes to the curve.
func CheckSignerOpts(a Algorithm, digest []byte, opts crypto.SignerOpts) error {
	switch o := opts.(type) {
	case nil:
		return fmt.Errorf("signer: nil crypto.SignerOpts: %w", ErrInvalidMessage)
	case *ed25519.Options:
		if o == nil {
			return fmt.Errorf("signer: nil *ed25519.Options: %w", ErrInvalidMessage)
		}
	case *rsa.PSSOptions:
		if o == nil {
			return fmt.Errorf("signer: nil *rsa.PSSOptions: %w", ErrInvalidMessage)
		}
	}
	h := opts.HashFunc()
	if a == Ed25519 {
		switch h {
		case crypto.SHA512:
			return fmt.Errorf("signer: Ed25519ph: %w", ErrUnsupported)
		case 0:
			if o, ok := opts.(*ed25519.Options); ok && o.Context != "" {
				return fmt.Errorf("signer: Ed25519ctx: %w", ErrUnsupported)
			}
			return nil
		}
		return fmt.Errorf("signer: Ed25519 takes opts.HashFunc() 0 (the message itself), not %v: %w", h, ErrUnsupported)
	}
	if a.IsBLS() {
		// BLS hashes the message to the curve itself; there is no digest
		// form to accept.
		if h != 0 {
			return fmt.Errorf("signer: %v signs the message itself: opts.HashFunc() must be 0, not %v: %w", a, h, ErrUnsupported)
		}
		return nil
	}
	if !a.Valid() {
		return fmt.Errorf("signer: invalid algorithm %v: %w", a, ErrUnsupported)
	}
	if h == 0 {
		return fmt.Errorf("signer: %v signs a digest: opts.HashFunc() must name its hash: %w", a, ErrInvalidMessage)
	}
	size, ok := digestSizes[h]
	if !ok {
		return fmt.Errorf("signer: %v with hash %v: %w", a, h, ErrUnsupported)
	}
	if len(digest) != size {
		return fmt.Errorf("signer: digest is %d bytes, %v makes %d: %w", len(digest), h, size, ErrInvalidMessage)
	}
	return nil
}

// digestSizes lists the hashes a Sign request may name, without making
// crypto.Hash.Size panic on values it does not know.
var digestSizes = map[crypto.Hash]int{
	crypto.SHA224:     28,
	crypto.SHA256:     32,
	crypto.SHA384:     48,
	crypto.SHA512:     64,
	crypto.SHA512_256: 32,
	crypto.SHA3_256:   32,
	crypto.SHA3_384:   48,
	crypto.SHA3_512:   64,
}
