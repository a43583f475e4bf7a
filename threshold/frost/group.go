package frost

import (
	"crypto/sha512"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"filippo.io/edwards25519"
)

// contextString is the ciphersuite's context string (RFC 9591, section 6.1).
const contextString = "FROST-ED25519-SHA512-v1"

// Sizes of the encodings of the ciphersuite's group elements and scalars
// (Ne and Ns in RFC 9591).
const (
	ElementSize = 32
	ScalarSize  = 32
)

// order is the little-endian encoding of the prime order L of the
// edwards25519 group, 2^252 + 27742317777372353535851937790883648493.
var order = [32]byte{
	0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10,
}

// errElement and errScalar are wrapped by *EncodingError.
var (
	errNonCanonical = errors.New("not a canonical encoding")
	errIdentity     = errors.New("the identity element")
	errTorsion      = errors.New("not in the prime-order subgroup")
	errZeroScalar   = errors.New("zero")
)

// deserializeElement is DeserializeElement of RFC 9591 for edwards25519: an
// RFC 8032 point encoding that must be canonical, must not be the identity
// and must lie in the prime-order subgroup.
func deserializeElement(b []byte) (*edwards25519.Point, error) {
	if len(b) != ElementSize {
		return nil, fmt.Errorf("%d bytes, want %d", len(b), ElementSize)
	}
	p, err := new(edwards25519.Point).SetBytes(b)
	if err != nil {
		return nil, errNonCanonical
	}
	// SetBytes accepts y ≥ p and x = 0 with the sign bit set; the
	// canonical encoding is the one that round-trips.
	if string(p.Bytes()) != string(b) {
		return nil, errNonCanonical
	}
	if p.Equal(edwards25519.NewIdentityPoint()) == 1 {
		return nil, errIdentity
	}
	if !inPrimeOrderSubgroup(p) {
		return nil, errTorsion
	}
	return p, nil
}

// inPrimeOrderSubgroup reports whether [L]p is the identity. L does not fit
// in a canonical scalar, so [L]p is computed as [L-1]p + p.
func inPrimeOrderSubgroup(p *edwards25519.Point) bool {
	lMinus1 := order
	lMinus1[0]-- // L ends in 0xed, so no borrow
	s, err := new(edwards25519.Scalar).SetCanonicalBytes(lMinus1[:])
	if err != nil {
		panic("frost: L-1 is not canonical")
	}
	q := new(edwards25519.Point).VarTimeDoubleScalarBaseMult(s, p, edwards25519.NewScalar())
	q.Add(q, p)
	return q.Equal(edwards25519.NewIdentityPoint()) == 1
}

// serializeElement is SerializeElement: it refuses the identity, which
// never arises from honest inputs.
func serializeElement(p *edwards25519.Point) ([]byte, error) {
	if p.Equal(edwards25519.NewIdentityPoint()) == 1 {
		return nil, errIdentity
	}
	return p.Bytes(), nil
}

// deserializeScalar is DeserializeScalar: a canonical little-endian scalar
// below L.
func deserializeScalar(b []byte) (*edwards25519.Scalar, error) {
	if len(b) != ScalarSize {
		return nil, fmt.Errorf("%d bytes, want %d", len(b), ScalarSize)
	}
	s, err := new(edwards25519.Scalar).SetCanonicalBytes(b)
	if err != nil {
		return nil, errNonCanonical
	}
	return s, nil
}

func isZero(s *edwards25519.Scalar) bool { return s.Equal(edwards25519.NewScalar()) == 1 }

// hashToScalar returns SHA-512(parts…) reduced modulo L.
func hashToScalar(parts ...[]byte) *edwards25519.Scalar {
	h := sha512.New()
	for _, p := range parts {
		h.Write(p)
	}
	var d [64]byte
	s, err := new(edwards25519.Scalar).SetUniformBytes(h.Sum(d[:0]))
	if err != nil {
		panic("frost: SetUniformBytes refused 64 bytes")
	}
	return s
}

func hash(parts ...[]byte) []byte {
	h := sha512.New()
	for _, p := range parts {
		h.Write(p)
	}
	return h.Sum(nil)
}

// The ciphersuite's hash functions, RFC 9591 section 6.5.
func h1(m []byte) *edwards25519.Scalar {
	return hashToScalar([]byte(contextString), []byte("rho"), m)
}

// h2 has no domain separation, for compatibility with RFC 8032.
func h2(m ...[]byte) *edwards25519.Scalar { return hashToScalar(m...) }

func h3(m ...[]byte) *edwards25519.Scalar {
	return hashToScalar(append([][]byte{[]byte(contextString), []byte("nonce")}, m...)...)
}

func h4(m []byte) []byte { return hash([]byte(contextString), []byte("msg"), m) }

func h5(m []byte) []byte { return hash([]byte(contextString), []byte("com"), m) }

// hdkg is the challenge hash of the DKG's proofs of knowledge. RFC 9591
// leaves the DKG out of scope; this follows the FROST paper (KG20, figure
// 1) with the ciphersuite's context string and the label "dkg".
func hdkg(m ...[]byte) *edwards25519.Scalar {
	return hashToScalar(append([][]byte{[]byte(contextString), []byte("dkg")}, m...)...)
}

// randomScalar returns a uniformly random scalar from 64 bytes of r,
// reduced modulo L (RFC 9591, appendix D allows the wide reduction).
func randomScalar(r io.Reader) (*edwards25519.Scalar, error) {
	var b [64]byte
	defer clear(b[:])
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return nil, fmt.Errorf("frost: reading randomness: %w", err)
	}
	s, err := new(edwards25519.Scalar).SetUniformBytes(b[:])
	if err != nil {
		panic("frost: SetUniformBytes refused 64 bytes")
	}
	return s, nil
}

// nonZeroRandomScalar draws until the scalar is not zero.
func nonZeroRandomScalar(r io.Reader) (*edwards25519.Scalar, error) {
	for {
		s, err := randomScalar(r)
		if err != nil || !isZero(s) {
			return s, err
		}
	}
}

// wipeScalar overwrites s with zero. Scalar has no exported way to clear
// its limbs other than setting a value.
func wipeScalar(s *edwards25519.Scalar) {
	if s != nil {
		s.Set(edwards25519.NewScalar())
	}
}

// scalarFromUint returns the scalar with the small value v.
func scalarFromUint(v uint64) *edwards25519.Scalar {
	var b [32]byte
	binary.LittleEndian.PutUint64(b[:], v)
	s, err := new(edwards25519.Scalar).SetCanonicalBytes(b[:])
	if err != nil {
		panic("frost: small scalar not canonical")
	}
	return s
}
