package frost

import (
	"crypto/sha512"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"filippo.io/edwards25519"
	"filippo.io/edwards25519/field"
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
	// canonical encoding is the one that round-trips (p.Bytes() == b),
	// which canonicalEncoding tests without the field inversion of Bytes.
	if !canonicalEncoding(b) {
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

// canonicalEncoding reports whether b, which SetBytes accepted, is the
// canonical encoding of its point, i.e. whether re-encoding the point
// gives b back. SetBytes reduces y modulo p = 2^255 - 19, so y must be
// below p; and it accepts the sign bit set on x = 0, which re-encodes with
// the bit clear. x = 0 exactly when y² = 1, that is y = 1 (the identity)
// or y = p - 1 (the point of order 2).
func canonicalEncoding(b []byte) bool {
	// y ≥ p: y is 2^255 - 19 … 2^255 - 1, bytes ed…ff ff…ff 7f (little
	// endian, the sign bit masked).
	high := b[31]&0x7f == 0x7f
	for _, c := range b[1:31] {
		high = high && c == 0xff
	}
	if high && b[0] >= 0xed {
		return false
	}
	if b[31]&0x80 == 0 {
		return true
	}
	// The sign bit is set: refuse y = 1 and y = p - 1 (ec ff…ff 7f).
	one, pMinus1 := b[0] == 1 && b[31] == 0x80, high && b[0] == 0xec
	for _, c := range b[1:31] {
		one = one && c == 0
	}
	return !one && !pMinus1
}

// inPrimeOrderSubgroup reports whether p lies in the subgroup of prime
// order L, which RFC 9591 lets one test by checking that [L]p is the
// identity, noting that faster methods exist ([Pornin22]: "Point-halving
// and subgroup membership in twisted Edwards curves", ePrint 2022/1164).
// This is such a method, exact and about twice as fast as the
// multiplication by L (which the tests keep as the reference):
//
// The group of edwards25519 is Z/8 × Z/L, so its prime-order subgroup is
// 8E, the points that can be halved three times; any half will do, since
// the halves of a point differ by the point of order 2, which is in 4E.
// A point (x, y), y ≠ 1, x ≠ 0, maps to (u, w) = ((a-d)(1+y)/(1-y), 2/x) on
// C(A, B): u·w² = u² + A·u + B, with A = 2(a+d), B = (a-d)². Doubling on
// C(A, B) is iso∘ψ2∘ψ1, with the 2-isogenies (Vélu, kernel {∞, (0, 0)})
//
//	ψ1: C(A, B)   → C(A', B'),  (u, w) ↦ (w², -(u - B/u)/w),  A' = -2A, B' = A² - 4B
//	ψ2: C(A', B') → C(4A, 16B), (u, w) ↦ (w², -(u - B'/u)/w)
//	iso: C(4A, 16B) → C(A, B),  (u, w) ↦ (u/4, w/2)
//
// so a half of (u, w) is found by inverting them in turn: (4u, 2w) =
// (u₂, w₂); w' = √u₂, which exists exactly when the point is a double;
// u' = (u₂ - A' - w'·w₂)/2, the other preimage being (B'/u', -w'), with
// B'/u' = (u₂ - A' + w'·w₂)/2; B' is not a square, so exactly one of u'
// and B'/u' is, and its root w₁ gives the half (u₁, w₁), u₁ = (w₁² -
// A - w₁·w')/2 (w' of the preimage used). Two halvings and a last test
// that u is a square (a third halving is possible exactly then) decide
// membership. Points of low order (8p = identity), where the maps meet
// their exceptional values, are answered directly: of those only the
// identity is in the subgroup. It runs in variable time: the points it
// checks are public.
func inPrimeOrderSubgroup(p *edwards25519.Point) bool {
	if new(edwards25519.Point).MultByCofactor(p).Equal(edwards25519.NewIdentityPoint()) == 1 {
		return p.Equal(edwards25519.NewIdentityPoint()) == 1
	}
	// (u, w) = ((a-d)(Z+Y)/(Z-Y), 2Z/X), moved to the isomorphic curve
	// C(A·e², B·e⁴) by (u, w) ↦ (u·e², w·e) with e = X(Z-Y), which leaves
	// no division: u = (a-d)(Z+Y)·X·e, w = 2Z(Z-Y). The halving below uses
	// A and A' only (B' through the other root), so it runs there with
	// A·e² and A'·e²; whether u is a square does not change. X ≠ 0 and
	// Y ≠ Z for a point of large order.
	X, Y, Z, _ := p.ExtendedCoordinates()
	var zMinusY, e, e2, aE, aPrimeE, u, w, t field.Element
	zMinusY.Subtract(Z, Y)
	e.Multiply(X, &zMinusY)
	e2.Square(&e)
	aE.Multiply(feA, &e2)
	u.Add(Z, Y)
	u.Multiply(&u, feAMinusD)
	u.Multiply(&u, X)
	u.Multiply(&u, &e)
	w.Multiply(Z, &zMinusY)
	w.Add(&w, &w)
	var u2, w2, wp, up, wh, uh, tmp field.Element
	for range 2 {
		// Invert iso: (u₂, w₂) = (4u, 2w) on C(4A, 16B).
		u2.Add(&u, &u)
		u2.Add(&u2, &u2)
		w2.Add(&w, &w)
		// Invert ψ2: w' = √u₂ (none: not a double), u' = (u₂ - A' - w'·w₂)/2.
		if _, ok := wp.SqrtRatio(&u2, feOne); ok != 1 {
			return false
		}
		tmp.Multiply(&wp, &w2)
		up.Subtract(&u2, aPrimeE.Multiply(feAPrime, &e2))
		up.Subtract(&up, &tmp)
		up.Multiply(&up, feHalf)
		// Invert ψ1 from (u', w') if u' is a square. If not, from the
		// other preimage (B'/u', -w'), whose root needs no second square
		// root: SqrtRatio gave r with r² = i·u' (i = √-1), and moving to
		// the isomorphic curve by f = r (e ← e·r) takes that preimage to
		// (B'·e⁴·i, -w'·r), whose u is a square with the root √(B'·i)·e²
		// (B' and i are not squares, so B'·i is).
		if _, ok := wh.SqrtRatio(&up, feOne); ok != 1 {
			r := &wh
			t.Multiply(feSqrtBPrimeI, &e2)  // √(B'·i)·e², with the old e
			e2.Multiply(&e2, tmp.Square(r)) // (e·r)² = e²·i·u'
			aE.Multiply(feA, &e2)
			wp.Multiply(&wp, r)
			wp.Negate(&wp)
			up.Square(&t) // B'·e⁴·i, new e
			wh.Set(&t)
		}
		// u₁ = (w₁² - A - w₁·w')/2, w₁² = u'.
		uh.Subtract(&up, &aE)
		uh.Subtract(&uh, tmp.Multiply(&wh, &wp))
		u.Multiply(&uh, feHalf)
		w.Set(&wh)
	}
	_, ok := t.SqrtRatio(&u, feOne)
	return ok == 1
}

// Constants of inPrimeOrderSubgroup: with a = -1 and d = -121665/121666,
// a-d, A = 2(a+d), A' = -2A, and 1/2.
var feOne, feAMinusD, feA, feAPrime, feHalf, feSqrtBPrimeI = func() (one, aMinusD, a, aPrime, half, sqrtBPrimeI *field.Element) {
	small := func(v uint32) *field.Element {
		var b [32]byte
		b[0], b[1], b[2] = byte(v), byte(v>>8), byte(v>>16)
		e, err := new(field.Element).SetBytes(b[:])
		if err != nil {
			panic("frost: small field element")
		}
		return e
	}
	one = small(1)
	d := new(field.Element).Invert(small(121666))
	d.Multiply(d, small(121665))
	d.Negate(d)
	minusOne := new(field.Element).Negate(one)
	aMinusD = new(field.Element).Subtract(minusOne, d)
	a = new(field.Element).Add(minusOne, d)
	a.Add(a, a)
	aPrime = new(field.Element).Add(a, a)
	aPrime.Negate(aPrime)
	half = new(field.Element).Invert(small(2))
	// B' = A² - 4B, B = (a-d)²; i = √-1 (SqrtRatio(-1, 1)).
	bPrime := new(field.Element).Square(a)
	b4 := new(field.Element).Square(aMinusD)
	b4.Add(b4, b4)
	b4.Add(b4, b4)
	bPrime.Subtract(bPrime, b4)
	i, ok := new(field.Element).SqrtRatio(minusOne, one)
	if ok != 1 {
		panic("frost: -1 is not a square")
	}
	if _, ok := new(field.Element).SqrtRatio(bPrime, one); ok == 1 {
		panic("frost: B' is a square")
	}
	sqrtBPrimeI, ok = new(field.Element).SqrtRatio(new(field.Element).Multiply(bPrime, i), one)
	if ok != 1 {
		panic("frost: B'·i is not a square")
	}
	return
}()

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

// H3 is computed only in nonce generation: see nonceGenerateEnc.

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

// appendEncodings appends the encodings of ps (each as p.Bytes()) to dst,
// with one field inversion for all of them instead of one each
// (Montgomery's trick: the inverse of every Z from the inverse of their
// product). Points have Z ≠ 0, so the product is invertible.
func appendEncodings(dst []byte, ps ...*edwards25519.Point) []byte {
	zs := make([]field.Element, len(ps))
	prefix := make([]field.Element, len(ps)) // prefix[i] = Z_0 ⋯ Z_{i-1}
	acc := new(field.Element).One()
	for i, p := range ps {
		_, _, z, _ := p.ExtendedCoordinates()
		zs[i].Set(z)
		prefix[i].Set(acc)
		acc.Multiply(acc, z)
	}
	inv := new(field.Element).Invert(acc) // 1 / (Z_0 ⋯ Z_{n-1})
	start := len(dst)
	dst = append(dst, make([]byte, len(ps)*ElementSize)...)
	var zInv, x, y field.Element
	for i := len(ps) - 1; i >= 0; i-- {
		zInv.Multiply(inv, &prefix[i]) // 1 / Z_i
		inv.Multiply(inv, &zs[i])      // 1 / (Z_0 ⋯ Z_{i-1})
		px, py, _, _ := ps[i].ExtendedCoordinates()
		x.Multiply(px, &zInv)
		y.Multiply(py, &zInv)
		out := dst[start+i*ElementSize:][:ElementSize]
		copy(out, y.Bytes())
		out[31] |= byte(x.IsNegative() << 7)
	}
	return dst
}
