package cggmp21

import (
	"errors"
	"fmt"
	"math/big"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	decredecdsa "github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
	"github.com/taurusgroup/multi-party-sig/pkg/ecdsa"
	"github.com/taurusgroup/multi-party-sig/pkg/math/curve"
)

// ErrSignature is wrapped by the errors of a signature that does not
// verify, or is not low-S.
var ErrSignature = errors.New("cggmp21: bad signature")

// secp256k1's parameters, for the textbook verification.
var (
	fieldP, _ = new(big.Int).SetString("fffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2f", 16)
	orderN, _ = new(big.Int).SetString("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141", 16)
	baseX, _  = new(big.Int).SetString("79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798", 16)
	baseY, _  = new(big.Int).SetString("483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8", 16)
	halfN     = new(big.Int).Rsh(orderN, 1)
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

// VerifyTextbook verifies the same as VerifyDecred with math/big and the
// textbook equations (SEC 1, 4.1.4) in affine coordinates: nothing shared
// with decred's code or the library's. Slow; for tests.
func VerifyTextbook(pub, hash, sig []byte) error {
	if len(sig) != 64 || len(pub) != 33 || (pub[0] != 2 && pub[0] != 3) {
		return fmt.Errorf("%w: lengths or key prefix", ErrSignature)
	}
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
	if r.Sign() == 0 || s.Sign() == 0 || r.Cmp(orderN) >= 0 || s.Cmp(orderN) >= 0 {
		return fmt.Errorf("%w: R or S out of range", ErrSignature)
	}
	if s.Cmp(halfN) > 0 {
		return fmt.Errorf("%w: S above n/2 (textbook)", ErrSignature)
	}
	q, ok := decompress(pub)
	if !ok {
		return fmt.Errorf("%w: key not on the curve", ErrSignature)
	}
	e := new(big.Int).SetBytes(hash) // a 32-byte hash: no truncation
	w := new(big.Int).ModInverse(s, orderN)
	u1 := new(big.Int).Mod(new(big.Int).Mul(e, w), orderN)
	u2 := new(big.Int).Mod(new(big.Int).Mul(r, w), orderN)
	x := add(mul(point{x: baseX, y: baseY}, u1), mul(q, u2))
	if x.inf || new(big.Int).Mod(x.x, orderN).Cmp(r) != 0 {
		return fmt.Errorf("%w: the textbook verification rejects it", ErrSignature)
	}
	return nil
}

// point is an affine point of secp256k1, or the point at infinity.
type point struct {
	x, y *big.Int
	inf  bool
}

func decompress(pub []byte) (point, bool) {
	x := new(big.Int).SetBytes(pub[1:])
	if x.Cmp(fieldP) >= 0 {
		return point{}, false
	}
	y2 := new(big.Int).Exp(x, big.NewInt(3), fieldP)
	y2.Add(y2, big.NewInt(7)).Mod(y2, fieldP)
	y := new(big.Int).ModSqrt(y2, fieldP)
	if y == nil {
		return point{}, false
	}
	if y.Bit(0) != uint(pub[0]&1) {
		y.Sub(fieldP, y)
	}
	return point{x: x, y: y}, true
}

func add(a, b point) point {
	switch {
	case a.inf:
		return b
	case b.inf:
		return a
	}
	var l *big.Int
	if a.x.Cmp(b.x) == 0 {
		if new(big.Int).Add(a.y, b.y).Mod(new(big.Int).Add(a.y, b.y), fieldP).Sign() == 0 {
			return point{inf: true}
		}
		// λ = 3x² / 2y
		num := new(big.Int).Mul(a.x, a.x)
		num.Mul(num, big.NewInt(3))
		den := new(big.Int).Lsh(a.y, 1)
		l = num.Mul(num, den.ModInverse(den, fieldP))
	} else {
		num := new(big.Int).Sub(b.y, a.y)
		den := new(big.Int).Sub(b.x, a.x)
		den.Mod(den, fieldP)
		l = num.Mul(num, den.ModInverse(den, fieldP))
	}
	l.Mod(l, fieldP)
	x := new(big.Int).Mul(l, l)
	x.Sub(x, a.x).Sub(x, b.x).Mod(x, fieldP)
	y := new(big.Int).Sub(a.x, x)
	y.Mul(y, l).Sub(y, a.y).Mod(y, fieldP)
	return point{x: x, y: y}
}

func mul(p point, k *big.Int) point {
	acc := point{inf: true}
	for i := k.BitLen() - 1; i >= 0; i-- {
		acc = add(acc, acc)
		if k.Bit(i) == 1 {
			acc = add(acc, p)
		}
	}
	return acc
}
