package dkls23

import (
	"crypto/sha256"
	"encoding/binary"
	"io"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
)

// Scalar is an integer modulo the order q of secp256k1's group.
type Scalar = secp256k1.ModNScalar

// pointLen and scalarLen are the encoded sizes: a compressed point (SEC 1)
// and a big-endian scalar below q.
const (
	pointLen  = 33
	scalarLen = 32
)

// Point is a point of secp256k1, kept in affine form (Z = 1) so that it
// encodes without further work. The zero Point is not a valid point; the
// identity is never encoded.
type Point struct{ p secp256k1.JacobianPoint }

// baseMul returns k·G.
func baseMul(k *Scalar) Point {
	var r Point
	secp256k1.ScalarBaseMultNonConst(k, &r.p)
	r.p.ToAffine()
	return r
}

// mul returns k·P.
func (p Point) mul(k *Scalar) Point {
	var r Point
	secp256k1.ScalarMultNonConst(k, &p.p, &r.p)
	r.p.ToAffine()
	return r
}

// add returns P + Q.
func (p Point) add(q Point) Point {
	var r Point
	secp256k1.AddNonConst(&p.p, &q.p, &r.p)
	r.p.ToAffine()
	return r
}

// neg returns −P.
func (p Point) neg() Point {
	r := p
	r.p.Y.Negate(1).Normalize()
	return r
}

// isIdentity reports whether P is the point at infinity.
func (p Point) isIdentity() bool {
	return (p.p.X.IsZero() && p.p.Y.IsZero()) || p.p.Z.IsZero()
}

// equal reports whether P = Q.
func (p Point) equal(q Point) bool {
	return p.p.EquivalentNonConst(&q.p)
}

// bytes returns P compressed (33 bytes); the identity encodes as zeros,
// which decodePoint refuses.
func (p Point) bytes() []byte {
	if p.isIdentity() {
		return make([]byte, pointLen)
	}
	return secp256k1.NewPublicKey(&p.p.X, &p.p.Y).SerializeCompressed()
}

// decodePoint parses a compressed point on the curve; the identity and
// anything off the curve are refused.
func decodePoint(b []byte) (Point, bool) {
	if len(b) != pointLen {
		return Point{}, false
	}
	pk, err := secp256k1.ParsePubKey(b)
	if err != nil {
		return Point{}, false
	}
	var r Point
	pk.AsJacobian(&r.p)
	return r, true
}

// decodeScalar parses a canonical (below q) big-endian scalar.
func decodeScalar(b []byte) (Scalar, bool) {
	var s Scalar
	if len(b) != scalarLen {
		return s, false
	}
	var a [32]byte
	copy(a[:], b)
	overflow := s.SetBytes(&a)
	return s, overflow == 0
}

// putScalar appends s's 32 bytes to dst.
func putScalar(dst []byte, s *Scalar) []byte {
	b := s.Bytes()
	return append(dst, b[:]...)
}

// randomScalar draws a uniform nonzero scalar from rand: 64 bytes reduced
// modulo q, whose bias is below 2^-256.
func randomScalar(rand io.Reader) (Scalar, error) {
	var buf [64]byte
	for {
		if _, err := io.ReadFull(rand, buf[:]); err != nil {
			return Scalar{}, err
		}
		s := wideReduce(&buf)
		if !s.IsZero() {
			return s, nil
		}
	}
}

// wideReduce returns the 512-bit big-endian integer b modulo q, as
// hi·2^256 + lo.
func wideReduce(b *[64]byte) Scalar {
	var hi, lo, two128 Scalar
	var h, l [32]byte
	copy(h[:], b[:32])
	copy(l[:], b[32:])
	hi.SetBytes(&h)
	lo.SetBytes(&l)
	// 2^256 mod q = (2^128)^2 mod q.
	var t [32]byte
	t[15] = 1
	two128.SetBytes(&t)
	hi.Mul(&two128).Mul(&two128)
	return *hi.Add(&lo)
}

// transcript hashes domain-separated, length-prefixed fields with
// SHA-256; every hash in the protocol goes through one, so that no two
// uses of the hash can collide on the same input.
type transcript struct{ buf []byte }

// newTranscript starts a transcript for the use named by label.
func newTranscript(label string) *transcript {
	t := &transcript{}
	return t.add([]byte("signerkit/dkls23/" + label))
}

// add appends one field.
func (t *transcript) add(b []byte) *transcript {
	t.buf = binary.BigEndian.AppendUint32(t.buf, uint32(len(b)))
	t.buf = append(t.buf, b...)
	return t
}

// addUint appends an integer field.
func (t *transcript) addUint(v uint64) *transcript {
	return t.add(binary.BigEndian.AppendUint64(nil, v))
}

// sum returns the 32-byte digest.
func (t *transcript) sum() [32]byte { return sha256.Sum256(t.buf) }

// scalar returns a scalar derived from the transcript: two digests (with a
// counter) reduced modulo q.
func (t *transcript) scalar() Scalar {
	var wide [64]byte
	a := sha256.Sum256(append(t.buf, 0))
	b := sha256.Sum256(append(t.buf, 1))
	copy(wide[:32], a[:])
	copy(wide[32:], b[:])
	return wideReduce(&wide)
}
