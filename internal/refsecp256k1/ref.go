// Package refsecp256k1 is a slow, non-constant-time reference implementation
// of ECDSA over the secp256k1 curve, written directly from the textbook
// definitions (SEC 1 v2, sections 2.2, 2.3.4 and 4.1) using only math/big.
//
// It exists solely so that tests can check signatures and public keys
// independently of github.com/decred/dcrd/dcrec/secp256k1, which the
// production code uses. It deliberately shares no code with that library (or
// any other curve library).
//
// It must NEVER be used to sign with, or otherwise handle, real private keys:
// every operation leaks timing information about its inputs, nonces are
// supplied by the caller, and no attempt is made to wipe secrets from memory.
package refsecp256k1

import (
	"errors"
	"math/big"
	"sync"
)

// Curve domain parameters of secp256k1 (SEC 2 v2, section 2.4.1):
// y² = x³ + a·x + b over GF(p) with a = 0 and b = 7, base point G = (gx, gy)
// of prime order n (cofactor 1).
var (
	p  = mustHex("fffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2f")
	n  = mustHex("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141")
	gx = mustHex("79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798")
	gy = mustHex("483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8")
	b  = big.NewInt(7)

	halfN      = new(big.Int).Rsh(n, 1)                                  // ⌊n/2⌋
	sqrtExp    = new(big.Int).Rsh(new(big.Int).Add(p, big.NewInt(1)), 2) // (p+1)/4, valid since p ≡ 3 (mod 4)
	orderBits  = n.BitLen()                                              // 256
	orderBytes = (orderBits + 7) / 8                                     // 32
	one        = big.NewInt(1)

	mask256     = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1)) // 2²⁵⁶ − 1
	pComplement = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), p)             // c = 2²⁵⁶ − p = 2³² + 977
)

func mustHex(s string) *big.Int {
	v, ok := new(big.Int).SetString(s, 16)
	if !ok {
		panic("refsecp256k1: bad constant " + s)
	}
	return v
}

// P returns a copy of the field prime p.
func P() *big.Int { return new(big.Int).Set(p) }

// N returns a copy of the group order n.
func N() *big.Int { return new(big.Int).Set(n) }

// Gx returns a copy of the x coordinate of the base point G.
func Gx() *big.Int { return new(big.Int).Set(gx) }

// Gy returns a copy of the y coordinate of the base point G.
func Gy() *big.Int { return new(big.Int).Set(gy) }

// B returns a copy of the curve coefficient b (= 7). The coefficient a is 0.
func B() *big.Int { return new(big.Int).Set(b) }

// Errors returned by ParsePublicKey.
var (
	errPubKeyLength = errors.New("refsecp256k1: public key must be 33 (compressed) or 65 (uncompressed) bytes")
	errPubKeyPrefix = errors.New("refsecp256k1: public key has an invalid prefix byte")
	errPubKeyRange  = errors.New("refsecp256k1: public key coordinate is not below the field prime")
	errNotOnCurve   = errors.New("refsecp256k1: public key is not a point on the curve")
)

// ---------------------------------------------------------------------------
// Field arithmetic mod p. Every value handled here is kept reduced to
// [0, p−1]. The helpers write into a caller-supplied destination (which may
// alias an operand) so that the group law does not allocate on every field
// operation. A fieldCtx holds the scratch space for products; each top-level
// operation uses its own, so nothing mutable is shared between goroutines.

type fieldCtx struct{ prod, hi big.Int }

// mul sets z = x·y mod p.
//
// The reduction uses the special form p = 2²⁵⁶ − c with c = 2³² + 977:
// writing t = hi·2²⁵⁶ + lo gives t ≡ hi·c + lo (mod p), which is applied
// until t < 2²⁵⁶, followed by at most one subtraction of p. (A generic
// big.Int division gives the same result but is several times slower,
// notably under the race detector.)
func (f *fieldCtx) mul(z, x, y *big.Int) *big.Int {
	t := f.prod.Mul(x, y)
	for t.BitLen() > 256 {
		f.hi.Rsh(t, 256)
		t.And(t, mask256)
		f.hi.Mul(&f.hi, pComplement)
		t.Add(t, &f.hi)
	}
	if t.Cmp(p) >= 0 {
		t.Sub(t, p)
	}
	return z.Set(t)
}

// add sets z = x + y mod p.
func (f *fieldCtx) add(z, x, y *big.Int) *big.Int {
	z.Add(x, y)
	if z.Cmp(p) >= 0 {
		z.Sub(z, p)
	}
	return z
}

// sub sets z = x − y mod p.
func (f *fieldCtx) sub(z, x, y *big.Int) *big.Int {
	z.Sub(x, y)
	if z.Sign() < 0 {
		z.Add(z, p)
	}
	return z
}

// curveRHS returns x³ + 7 mod p for a reduced x.
func curveRHS(x *big.Int) *big.Int {
	var f fieldCtx
	z := new(big.Int)
	f.mul(z, x, x)
	f.mul(z, z, x)
	return f.add(z, z, b)
}

// IsOnCurve reports whether (x, y) is an affine point of secp256k1 with both
// coordinates in [0, p-1]. The point at infinity (nil coordinates) is not
// considered on the curve.
func IsOnCurve(x, y *big.Int) bool {
	if x == nil || y == nil {
		return false
	}
	if x.Sign() < 0 || y.Sign() < 0 || x.Cmp(p) >= 0 || y.Cmp(p) >= 0 {
		return false
	}
	var f fieldCtx
	return f.mul(new(big.Int), y, y).Cmp(curveRHS(x)) == 0
}

// ---------------------------------------------------------------------------
// Group law in Jacobian coordinates: (X, Y, Z) represents the affine point
// (X/Z², Y/Z³); Z = 0 represents the point at infinity. Point operations
// return fresh values and never modify their operands.

type jacobian struct{ x, y, z *big.Int }

func infinity() jacobian { return jacobian{new(big.Int), new(big.Int), new(big.Int)} }

func (q jacobian) isInfinity() bool { return q.z.Sign() == 0 }

func fromAffine(x, y *big.Int) jacobian {
	return jacobian{new(big.Int).Set(x), new(big.Int).Set(y), big.NewInt(1)}
}

// toAffine converts q to affine coordinates; it returns (nil, nil) for the
// point at infinity.
func (q jacobian) toAffine() (x, y *big.Int) {
	if q.isInfinity() {
		return nil, nil
	}
	var f fieldCtx
	zinv := new(big.Int).ModInverse(q.z, p)
	zinv2 := f.mul(new(big.Int), zinv, zinv)
	x = f.mul(new(big.Int), q.x, zinv2)
	y = f.mul(new(big.Int), q.y, f.mul(zinv2, zinv2, zinv))
	return x, y
}

// doublePoint returns 2q using the a = 0 doubling formulas
//
//	S = 4·X·Y², M = 3·X², X' = M² − 2·S, Y' = M·(S − X') − 8·Y⁴, Z' = 2·Y·Z.
func (f *fieldCtx) doublePoint(q jacobian) jacobian {
	if q.isInfinity() || q.y.Sign() == 0 {
		return infinity()
	}
	y2 := f.mul(new(big.Int), q.y, q.y)
	s := f.mul(new(big.Int), q.x, y2)
	f.add(s, s, s)
	f.add(s, s, s) // 4·X·Y²
	xx := f.mul(new(big.Int), q.x, q.x)
	m := f.add(new(big.Int), xx, xx)
	f.add(m, m, xx) // 3·X²
	x3 := f.mul(new(big.Int), m, m)
	f.sub(x3, x3, s)
	f.sub(x3, x3, s)
	y4 := f.mul(y2, y2, y2) // Y⁴ (reuses y2)
	f.add(y4, y4, y4)
	f.add(y4, y4, y4)
	f.add(y4, y4, y4) // 8·Y⁴
	y3 := f.sub(new(big.Int), s, x3)
	f.mul(y3, y3, m)
	f.sub(y3, y3, y4)
	z3 := f.mul(new(big.Int), q.y, q.z)
	f.add(z3, z3, z3)
	return jacobian{x3, y3, z3}
}

// addPoints returns q + r, handling the identity, doubling and inverse cases:
//
//	U1 = X1·Z2², U2 = X2·Z1², S1 = Y1·Z2³, S2 = Y2·Z1³, H = U2 − U1, R = S2 − S1,
//	X3 = R² − H³ − 2·U1·H², Y3 = R·(U1·H² − X3) − S1·H³, Z3 = H·Z1·Z2.
//
// When Z2 = 1 (r is stored in affine form) the factors of Z2 are skipped.
func (f *fieldCtx) addPoints(q, r jacobian) jacobian {
	if q.isInfinity() {
		return r
	}
	if r.isInfinity() {
		return q
	}
	rAffine := r.z.Cmp(one) == 0
	z1z1 := f.mul(new(big.Int), q.z, q.z)
	u2 := f.mul(new(big.Int), r.x, z1z1)
	s2 := f.mul(new(big.Int), r.y, f.mul(z1z1, z1z1, q.z))
	var u1, s1 *big.Int
	if rAffine {
		u1 = new(big.Int).Set(q.x)
		s1 = q.y // only read below
	} else {
		z2z2 := f.mul(new(big.Int), r.z, r.z)
		u1 = f.mul(new(big.Int), q.x, z2z2)
		s1 = f.mul(new(big.Int), q.y, f.mul(z2z2, z2z2, r.z))
	}
	if u1.Cmp(u2) == 0 {
		if s1.Cmp(s2) != 0 {
			return infinity() // q = −r
		}
		return f.doublePoint(q)
	}
	h := f.sub(u2, u2, u1)  // reuses u2
	rr := f.sub(s2, s2, s1) // reuses s2
	h2 := f.mul(new(big.Int), h, h)
	h3 := f.mul(new(big.Int), h2, h)
	u1h2 := f.mul(u1, u1, h2) // reuses u1
	x3 := f.mul(new(big.Int), rr, rr)
	f.sub(x3, x3, h3)
	f.sub(x3, x3, u1h2)
	f.sub(x3, x3, u1h2)
	y3 := f.sub(new(big.Int), u1h2, x3)
	f.mul(y3, y3, rr)
	f.sub(y3, y3, f.mul(h3, h3, s1))
	z3 := f.mul(new(big.Int), q.z, h)
	if !rAffine {
		f.mul(z3, z3, r.z)
	}
	return jacobian{x3, y3, z3}
}

// affine returns q with Z normalized to 1 (so it is cheap to add), or q
// itself if it is the point at infinity.
func (q jacobian) affine() jacobian {
	if q.isInfinity() {
		return q
	}
	return fromAffine(q.toAffine())
}

// scalarMult returns k·q for k ≥ 0 by left-to-right double-and-add. k is used
// as given (not reduced mod n), so that n·G = ∞ can be tested.
func scalarMult(k *big.Int, q jacobian) jacobian {
	var f fieldCtx
	acc := infinity()
	for i := k.BitLen() - 1; i >= 0; i-- {
		acc = f.doublePoint(acc)
		if k.Bit(i) == 1 {
			acc = f.addPoints(acc, q)
		}
	}
	return acc
}

func generator() jacobian { return fromAffine(gx, gy) }

// gPowers[i] = 2^i·G, computed once by repeated doubling, lets k·G be formed
// with additions only (about half the work of double-and-add). It is derived
// here from G alone, not taken from any other library.
var (
	gPowersOnce sync.Once
	gPowers     []jacobian
)

func baseMult(k *big.Int) jacobian {
	gPowersOnce.Do(func() {
		var f fieldCtx
		gPowers = make([]jacobian, orderBits+1)
		q := generator()
		for i := range gPowers {
			gPowers[i] = q.affine() // Z = 1 keeps later additions cheap
			q = f.doublePoint(q)
		}
	})
	if k.BitLen() > len(gPowers) {
		return scalarMult(k, generator())
	}
	var f fieldCtx
	acc := infinity()
	for i := 0; i < k.BitLen(); i++ {
		if k.Bit(i) == 1 {
			acc = f.addPoints(acc, gPowers[i])
		}
	}
	return acc
}

// shamirMult returns u1·G + u2·q in a single left-to-right pass over the
// bits of both scalars ("Shamir's trick"), with G + q precomputed.
func shamirMult(u1, u2 *big.Int, q jacobian) jacobian {
	var f fieldCtx
	g := generator()
	gq := f.addPoints(g, q).affine()
	bits := max(u1.BitLen(), u2.BitLen())
	acc := infinity()
	for i := bits - 1; i >= 0; i-- {
		acc = f.doublePoint(acc)
		switch {
		case u1.Bit(i) == 1 && u2.Bit(i) == 1:
			acc = f.addPoints(acc, gq)
		case u1.Bit(i) == 1:
			acc = f.addPoints(acc, g)
		case u2.Bit(i) == 1:
			acc = f.addPoints(acc, q)
		}
	}
	return acc
}

// ---------------------------------------------------------------------------
// Public API.

// PublicKey returns the affine point d·G. d is reduced mod n first; if the
// result is zero (d ≡ 0 mod n) the point at infinity is returned as (nil, nil).
func PublicKey(d *big.Int) (x, y *big.Int) {
	k := new(big.Int).Mod(d, n)
	return baseMult(k).toAffine()
}

// ParsePublicKey decodes a SEC 1 encoded public key: 33-byte compressed
// (0x02 = even y, 0x03 = odd y) or 65-byte uncompressed (0x04). Hybrid
// encodings (0x06/0x07) and every other prefix are rejected. The decoded point
// is checked to lie on the curve, with coordinates below p.
func ParsePublicKey(data []byte) (x, y *big.Int, err error) {
	switch len(data) {
	case 33:
		if data[0] != 0x02 && data[0] != 0x03 {
			return nil, nil, errPubKeyPrefix
		}
		x = new(big.Int).SetBytes(data[1:])
		if x.Cmp(p) >= 0 {
			return nil, nil, errPubKeyRange
		}
		rhs := curveRHS(x)
		// p ≡ 3 (mod 4), so a square root of rhs, if one exists, is
		// rhs^((p+1)/4). Squaring it back tells us whether it does.
		y = new(big.Int).Exp(rhs, sqrtExp, p)
		var f fieldCtx
		if f.mul(new(big.Int), y, y).Cmp(rhs) != 0 {
			return nil, nil, errNotOnCurve
		}
		wantOdd := data[0] == 0x03
		if (y.Bit(0) == 1) != wantOdd {
			y.Sub(p, y).Mod(y, p)
			// Only possible for y = 0, i.e. a point of order 2, which
			// secp256k1 (prime order, cofactor 1) does not have; kept as a
			// guard rather than relying on that fact.
			if (y.Bit(0) == 1) != wantOdd {
				return nil, nil, errNotOnCurve
			}
		}
		return x, y, nil
	case 65:
		if data[0] != 0x04 {
			return nil, nil, errPubKeyPrefix
		}
		x = new(big.Int).SetBytes(data[1:33])
		y = new(big.Int).SetBytes(data[33:])
		if x.Cmp(p) >= 0 || y.Cmp(p) >= 0 {
			return nil, nil, errPubKeyRange
		}
		if !IsOnCurve(x, y) {
			return nil, nil, errNotOnCurve
		}
		return x, y, nil
	default:
		return nil, nil, errPubKeyLength
	}
}

// hashToInt converts a message digest to an integer as SEC 1 section 4.1.3
// step 5 prescribes: take the leftmost ⌈log2 n⌉ bits of the hash (all of it
// if shorter) and interpret them as a big-endian integer. It is NOT reduced
// mod n.
func hashToInt(hash []byte) *big.Int {
	if len(hash) > orderBytes {
		hash = hash[:orderBytes]
	}
	e := new(big.Int).SetBytes(hash)
	if excess := len(hash)*8 - orderBits; excess > 0 {
		e.Rsh(e, uint(excess))
	}
	return e
}

// inScalarRange reports whether 1 ≤ v ≤ n−1.
func inScalarRange(v *big.Int) bool {
	return v != nil && v.Sign() > 0 && v.Cmp(n) < 0
}

// Verify reports whether (r, s) is a valid ECDSA signature of hash under the
// public key (x, y), following SEC 1 section 4.1.4:
//
//	reject unless 1 ≤ r, s ≤ n−1 and (x, y) is on the curve;
//	e = hashToInt(hash); w = s⁻¹ mod n; u1 = e·w mod n; u2 = r·w mod n;
//	R = u1·G + u2·Q (computed with Shamir's trick); reject if R = ∞;
//	accept iff R.x mod n = r.
//
// Both low-S and high-S signatures are accepted: low-S is a policy of some
// protocols, not part of ECDSA; use IsLowS to check it separately.
func Verify(x, y *big.Int, hash []byte, r, s *big.Int) bool {
	if !inScalarRange(r) || !inScalarRange(s) || !IsOnCurve(x, y) {
		return false
	}
	e := hashToInt(hash)
	w := new(big.Int).ModInverse(s, n)
	u1 := new(big.Int).Mul(e, w)
	u1.Mod(u1, n)
	u2 := new(big.Int).Mul(r, w)
	u2.Mod(u2, n)
	sum := shamirMult(u1, u2, fromAffine(x, y))
	if sum.isInfinity() {
		return false
	}
	rx, _ := sum.toAffine()
	v := rx.Mod(rx, n)
	return v.Cmp(r) == 0
}

// Sign computes the textbook ECDSA signature of hash with private key d and
// the caller-supplied nonce k (SEC 1 section 4.1.3); d and k must be non-nil
// and are reduced mod n:
//
//	R = k·G; r = R.x mod n; s = k⁻¹·(e + r·d) mod n.
//
// s is returned as computed, NOT normalized to low-S. It is meant only for
// known-answer tests with a published nonce. If k ≡ 0 mod n, or r or s comes
// out as zero, the signature is unusable (a real signer would pick another k)
// and the zero values are returned as they are; Verify rejects them.
func Sign(d, k *big.Int, hash []byte) (r, s *big.Int) {
	kk := new(big.Int).Mod(k, n)
	if kk.Sign() == 0 {
		return new(big.Int), new(big.Int)
	}
	rx, _ := baseMult(kk).toAffine()
	r = rx.Mod(rx, n)
	e := hashToInt(hash)
	s = new(big.Int).Mul(r, new(big.Int).Mod(d, n))
	s.Add(s, e)
	s.Mul(s, new(big.Int).ModInverse(kk, n))
	s.Mod(s, n)
	return r, s
}

// IsLowS reports whether s ≤ n/2 (rounded down), the canonical "low-S" form
// required by e.g. BIP 62/146 and produced by the decred signer. A nil or
// negative s is reported as not low.
func IsLowS(s *big.Int) bool {
	return s != nil && s.Sign() >= 0 && s.Cmp(halfN) <= 0
}
