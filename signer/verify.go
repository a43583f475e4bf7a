package signer

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/asn1"
	"errors"
	"fmt"
	"math/big"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	k1ecdsa "github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"

	"github.com/signerkit/signerkit/internal/eckey"
)

// Verify checks sig, in the wire form that SignContext returns for a (see
// Algorithm), over the whole message msg under pub. It returns nil for a
// valid signature and an error wrapping ErrInvalidSignature otherwise, or
// wrapping ErrUnsupported when pub is not a key for a, or ErrInvalidKey
// when pub is an Ed25519 key that CheckEd25519PublicKey refuses (of small
// order or not canonically encoded; crypto/ed25519 alone would accept a
// constant signature for every message under the identity key). A BLS
// signature is checked by its key (see BLSPublicKey).
func (a Algorithm) Verify(pub crypto.PublicKey, msg, sig []byte) error {
	if err := a.CheckKey(pub); err != nil {
		return err
	}
	ok := false
	switch a {
	case BLS12381MinPK, BLS12381MinSig:
		return verifyBLS(a, pub.(BLSPublicKey), msg, sig)
	case Ed25519:
		ok = len(sig) == ed25519.SignatureSize && ed25519.Verify(pub.(ed25519.PublicKey), msg, sig)
	case ECDSAP256, ECDSAP384:
		k := pub.(*ecdsa.PublicKey)
		if r, s, err := splitRaw(sig, a.scalarSize()); err == nil {
			ok = ecdsa.Verify(k, a.Digest(msg), r, s)
		}
	case ECDSASecp256k1:
		ok = verifySecp256k1(pub.(*ecdsa.PublicKey), a.Digest(msg), sig)
	case RSAPKCS1v15:
		ok = rsa.VerifyPKCS1v15(pub.(*rsa.PublicKey), crypto.SHA256, a.Digest(msg), sig) == nil
	case RSAPSS:
		opts := &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash, Hash: crypto.SHA256}
		ok = rsa.VerifyPSS(pub.(*rsa.PublicKey), crypto.SHA256, a.Digest(msg), sig, opts) == nil
	}
	if !ok {
		return fmt.Errorf("signer: %v signature does not verify: %w", a, ErrInvalidSignature)
	}
	return nil
}

// scalarSize is the byte length of r and s in the raw ECDSA form.
func (a Algorithm) scalarSize() int {
	if a == ECDSAP384 {
		return 48
	}
	return 32
}

func verifySecp256k1(pub *ecdsa.PublicKey, digest, sig []byte) bool {
	if len(sig) != 64 {
		return false
	}
	var r, s secp256k1.ModNScalar
	if r.SetByteSlice(sig[:32]) || s.SetByteSlice(sig[32:]) || r.IsZero() || s.IsZero() || s.IsOverHalfOrder() {
		return false // overflowed n, zero, or high-S
	}
	var x, y secp256k1.FieldVal
	if px, py := eckey.Coordinates(pub); x.SetByteSlice(px.Bytes()) || y.SetByteSlice(py.Bytes()) {
		return false
	}
	k := secp256k1.NewPublicKey(&x, &y)
	if !k.IsOnCurve() {
		return false
	}
	return k1ecdsa.NewSignature(&r, &s).Verify(digest, k)
}

func splitRaw(sig []byte, size int) (r, s *big.Int, err error) {
	if len(sig) != 2*size {
		return nil, nil, fmt.Errorf("signer: raw ECDSA signature is %d bytes, want %d: %w", len(sig), 2*size, ErrInvalidSignature)
	}
	return new(big.Int).SetBytes(sig[:size]), new(big.Int).SetBytes(sig[size:]), nil
}

type ecdsaASN1 struct{ R, S *big.Int }

// ECDSAToRaw converts an ASN.1 DER ECDSA signature, as crypto.Signer
// returns, to the fixed-width r‖s form that SignContext returns for a. For
// ECDSASecp256k1 it also lowers a high S to n − S, so a device that returns
// either form yields the canonical one. It returns an error wrapping
// ErrInvalidSignature for malformed input.
func ECDSAToRaw(a Algorithm, der []byte) ([]byte, error) {
	if !a.IsECDSA() {
		return nil, fmt.Errorf("signer: %v is not ECDSA: %w", a, ErrUnsupported)
	}
	var v ecdsaASN1
	rest, err := asn1.Unmarshal(der, &v)
	if err != nil || len(rest) != 0 {
		return nil, fmt.Errorf("signer: malformed ASN.1 ECDSA signature: %w", ErrInvalidSignature)
	}
	// encoding/asn1 skips elements after S; only the one DER encoding of
	// (r, s) is a signature, so a signature cannot be re-encoded.
	if again, err := asn1.Marshal(v); err != nil || !bytes.Equal(again, der) {
		return nil, fmt.Errorf("signer: ASN.1 ECDSA signature is not DER of (r, s): %w", ErrInvalidSignature)
	}
	n := a.Curve().Params().N
	if v.R.Sign() <= 0 || v.S.Sign() <= 0 || v.R.Cmp(n) >= 0 || v.S.Cmp(n) >= 0 {
		return nil, fmt.Errorf("signer: ECDSA r or s out of range: %w", ErrInvalidSignature)
	}
	if a == ECDSASecp256k1 {
		lowS(v.S, n)
	}
	size := a.scalarSize()
	raw := make([]byte, 2*size)
	v.R.FillBytes(raw[:size])
	v.S.FillBytes(raw[size:])
	return raw, nil
}

// ECDSAToASN1 converts a fixed-width r‖s ECDSA signature for a to ASN.1
// DER, as crypto.Signer returns. For ECDSASecp256k1 it lowers a high S.
func ECDSAToASN1(a Algorithm, raw []byte) ([]byte, error) {
	if !a.IsECDSA() {
		return nil, fmt.Errorf("signer: %v is not ECDSA: %w", a, ErrUnsupported)
	}
	r, s, err := splitRaw(raw, a.scalarSize())
	if err != nil {
		return nil, err
	}
	n := a.Curve().Params().N
	if r.Sign() == 0 || s.Sign() == 0 || r.Cmp(n) >= 0 || s.Cmp(n) >= 0 {
		return nil, fmt.Errorf("signer: ECDSA r or s out of range: %w", ErrInvalidSignature)
	}
	if a == ECDSASecp256k1 {
		lowS(s, n)
	}
	return asn1.Marshal(ecdsaASN1{r, s})
}

// lowS replaces s by n − s when s > n/2.
func lowS(s, n *big.Int) {
	half := new(big.Int).Rsh(n, 1)
	if s.Cmp(half) > 0 {
		s.Sub(n, s)
	}
}

// ParseSecp256k1PublicKey parses a secp256k1 public key in SEC 1 form,
// compressed (33 bytes, as Cosmos and tm2 carry it) or uncompressed (65).
func ParseSecp256k1PublicKey(b []byte) (*ecdsa.PublicKey, error) {
	if len(b) == 0 || (b[0] != 0x02 && b[0] != 0x03 && b[0] != 0x04) {
		return nil, fmt.Errorf("signer: secp256k1 public key is neither compressed nor uncompressed SEC 1: %w", ErrCorrupt)
	}
	k, err := secp256k1.ParsePubKey(b)
	if err != nil {
		return nil, fmt.Errorf("signer: secp256k1 public key: %w", errors.Join(ErrCorrupt, err))
	}
	return k.ToECDSA(), nil
}

// MarshalSecp256k1PublicKey returns the 33-byte compressed SEC 1 form of a
// secp256k1 public key.
func MarshalSecp256k1PublicKey(pub *ecdsa.PublicKey) ([]byte, error) {
	if pub == nil || pub.Curve == nil || pub.Curve.Params().Name != "secp256k1" {
		return nil, fmt.Errorf("signer: not a secp256k1 public key: %w", ErrUnsupported)
	}
	if !coordinatesInField(pub) {
		return nil, fmt.Errorf("signer: secp256k1 coordinates missing or out of range: %w", ErrCorrupt)
	}
	var x, y secp256k1.FieldVal
	if px, py := eckey.Coordinates(pub); x.SetByteSlice(px.Bytes()) || y.SetByteSlice(py.Bytes()) {
		return nil, fmt.Errorf("signer: secp256k1 coordinates out of range: %w", ErrCorrupt)
	}
	k := secp256k1.NewPublicKey(&x, &y)
	if !k.IsOnCurve() {
		return nil, fmt.Errorf("signer: secp256k1 point not on the curve: %w", ErrCorrupt)
	}
	return k.SerializeCompressed(), nil
}
