package cggmp21

import (
	"errors"
	"fmt"
	"math/big"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	decredecdsa "github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
	"github.com/signerkit/signerkit/internal/refsecp256k1"
	"github.com/taurusgroup/multi-party-sig/pkg/ecdsa"
	"github.com/taurusgroup/multi-party-sig/pkg/math/curve"
)

// ErrSignature is wrapped by the errors of a signature that does not
// verify, or is not low-S.
var ErrSignature = errors.New("cggmp21: bad signature")

// orderN is secp256k1's group order; halfN is n/2.
var (
	orderN = refsecp256k1.N()
	halfN  = new(big.Int).Rsh(orderN, 1)
)

// Signature returns the library's signature as 64 bytes, R‖S, with S
// replaced by n − S when it is above n/2: the low-S form Cosmos and gno
// require (the library makes either). This is the one place signatures
// are normalized.
func Signature(sig *ecdsa.Signature) ([]byte, error) {
	rb, err := sig.R.XScalar().MarshalBinary()
	if err != nil {
		return nil, err
	}
	sb, err := sig.S.MarshalBinary()
	if err != nil {
		return nil, err
	}
	s := new(big.Int).SetBytes(sb)
	if s.Cmp(halfN) > 0 {
		s.Sub(orderN, s)
	}
	out := make([]byte, 64)
	copy(out[32-len(rb):32], rb)
	s.FillBytes(out[32:])
	return out, nil
}

// PublicKey returns the group key, 33 bytes compressed.
func PublicKey(p curve.Point) ([]byte, error) { return p.MarshalBinary() }

// VerifyDecred verifies a 64-byte R‖S signature of hash under the
// compressed key pub with decred's secp256k1, and requires a low S.
func VerifyDecred(pub, hash, sig []byte) error {
	if len(sig) != 64 {
		return fmt.Errorf("%w: %d bytes, want 64", ErrSignature, len(sig))
	}
	key, err := secp256k1.ParsePubKey(pub)
	if err != nil {
		return fmt.Errorf("%w: key: %w", ErrSignature, err)
	}
	var r, s secp256k1.ModNScalar
	if r.SetByteSlice(sig[:32]) || s.SetByteSlice(sig[32:]) {
		return fmt.Errorf("%w: R or S not below the order", ErrSignature)
	}
	if s.IsOverHalfOrder() {
		return fmt.Errorf("%w: S above n/2 (decred)", ErrSignature)
	}
	if !decredecdsa.NewSignature(&r, &s).Verify(hash, key) {
		return fmt.Errorf("%w: decred's secp256k1 rejects it", ErrSignature)
	}
	return nil
}

// VerifyTextbook verifies the same as VerifyDecred with the module's
// internal/refsecp256k1, the textbook equations of SEC 1 in math/big:
// nothing shared with decred's code or the library's. Slow; for tests.
func VerifyTextbook(pub, hash, sig []byte) error {
	if len(sig) != 64 {
		return fmt.Errorf("%w: %d bytes, want 64", ErrSignature, len(sig))
	}
	x, y, err := refsecp256k1.ParsePublicKey(pub)
	if err != nil {
		return fmt.Errorf("%w: key: %w", ErrSignature, err)
	}
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
	if !refsecp256k1.IsLowS(s) {
		return fmt.Errorf("%w: S above n/2 (textbook)", ErrSignature)
	}
	if !refsecp256k1.Verify(x, y, hash, r, s) {
		return fmt.Errorf("%w: the textbook verification rejects it", ErrSignature)
	}
	return nil
}
