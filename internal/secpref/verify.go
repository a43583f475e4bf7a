// Package secpref is a reference ECDSA verifier for secp256k1, for tests:
// written with math/big from the curve's published parameters (SEC 2
// §2.4.1), it shares no code with decred's secp256k1 (which the signers
// use): affine coordinates, textbook addition and doubling, and
// double-and-add. It is slow and not constant time, which a verifier of
// public values may be. Tests verify threshold ECDSA signatures with it as
// well as with decred, so that a bug shared by a signer and its verifier
// cannot hide. Production code does not import it.
package secpref

import (
	"math/big"
)

var (
	bigP  = mustHex("fffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2f")
	bigN  = mustHex("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141")
	bigGx = mustHex("79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798")
	bigGy = mustHex("483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8")
)

func mustHex(s string) *big.Int {
	v, ok := new(big.Int).SetString(s, 16)
	if !ok {
		panic(s)
	}
	return v
}

// bigPoint is an affine point; inf marks the identity.
type bigPoint struct {
	x, y *big.Int
	inf  bool
}

func bigAdd(a, b bigPoint) bigPoint {
	if a.inf {
		return b
	}
	if b.inf {
		return a
	}
	var l *big.Int
	if a.x.Cmp(b.x) == 0 {
		if new(big.Int).Add(a.y, b.y).Mod(new(big.Int).Add(a.y, b.y), bigP).Sign() == 0 {
			return bigPoint{inf: true}
		}
		// λ = 3x² / 2y
		num := new(big.Int).Mul(a.x, a.x)
		num.Mul(num, big.NewInt(3))
		den := new(big.Int).Lsh(a.y, 1)
		l = num.Mul(num, den.ModInverse(den, bigP))
	} else {
		num := new(big.Int).Sub(b.y, a.y)
		den := new(big.Int).Sub(b.x, a.x)
		den.Mod(den, bigP)
		l = num.Mul(num, den.ModInverse(den, bigP))
	}
	l.Mod(l, bigP)
	x := new(big.Int).Mul(l, l)
	x.Sub(x, a.x).Sub(x, b.x).Mod(x, bigP)
	y := new(big.Int).Sub(a.x, x)
	y.Mul(y, l).Sub(y, a.y).Mod(y, bigP)
	return bigPoint{x: x, y: y}
}

func bigMul(k *big.Int, p bigPoint) bigPoint {
	acc := bigPoint{inf: true}
	for i := k.BitLen() - 1; i >= 0; i-- {
		acc = bigAdd(acc, acc)
		if k.Bit(i) == 1 {
			acc = bigAdd(acc, p)
		}
	}
	return acc
}

// bigDecompress parses a compressed point: y² = x³ + 7, y = (y²)^((p+1)/4)
// with the parity the prefix names.
func bigDecompress(b []byte) (bigPoint, bool) {
	if len(b) != 33 || (b[0] != 2 && b[0] != 3) {
		return bigPoint{}, false
	}
	x := new(big.Int).SetBytes(b[1:])
	if x.Cmp(bigP) >= 0 {
		return bigPoint{}, false
	}
	y2 := new(big.Int).Exp(x, big.NewInt(3), bigP)
	y2.Add(y2, big.NewInt(7)).Mod(y2, bigP)
	e := new(big.Int).Add(bigP, big.NewInt(1))
	e.Rsh(e, 2)
	y := new(big.Int).Exp(y2, e, bigP)
	if new(big.Int).Exp(y, big.NewInt(2), bigP).Cmp(y2) != 0 {
		return bigPoint{}, false
	}
	if y.Bit(0) != uint(b[0]&1) {
		y.Sub(bigP, y)
	}
	return bigPoint{x: x, y: y}, true
}

// Verify checks the ECDSA signature (r, s), 32 bytes each, big-endian, of
// the 32-byte hash under the compressed public key pub, and that s is low
// (s ≤ n/2), as Cosmos and gno require.
func Verify(pub, hash []byte, rb, sb []byte) bool {
	if len(hash) != 32 || len(rb) != 32 || len(sb) != 32 {
		return false
	}
	r, s := new(big.Int).SetBytes(rb), new(big.Int).SetBytes(sb)
	Q, ok := bigDecompress(pub)
	if !ok || r.Sign() <= 0 || s.Sign() <= 0 || r.Cmp(bigN) >= 0 || s.Cmp(bigN) >= 0 {
		return false
	}
	if s.Cmp(new(big.Int).Rsh(bigN, 1)) > 0 {
		return false
	}
	e := new(big.Int).SetBytes(hash)
	w := new(big.Int).ModInverse(s, bigN)
	u1 := new(big.Int).Mul(e, w)
	u1.Mod(u1, bigN)
	u2 := new(big.Int).Mul(r, w)
	u2.Mod(u2, bigN)
	X := bigAdd(bigMul(u1, bigPoint{x: bigGx, y: bigGy}), bigMul(u2, Q))
	if X.inf {
		return false
	}
	return new(big.Int).Mod(X.x, bigN).Cmp(r) == 0
}
