//go:build !cgo

package bls

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"

	"github.com/cloudflare/circl/ecc/bls12381"
	"golang.org/x/crypto/hkdf"

	"github.com/signerkit/signerkit/signer"
)

// Backend names the implementation this build signs with: "blst" when
// built with cgo, else "circl" (see the package doc).
const Backend = "circl"

// available reports whether this build can do BLS arithmetic: it can, in
// pure Go.
func available() error { return nil }

// secret is a private scalar in circl's representation. Its zero value is
// no key.
type secret struct{ s bls12381.Scalar }

// keyGen runs the IETF draft's KeyGen (draft-04 and later, as blst's
// KeyGen): HKDF-SHA-256 with the salt SHA-256("BLS-SIG-KEYGEN-SALT-"),
// hashed again while the result is zero, over ikm ‖ 0, key_info ‖ 48,
// 48 bytes reduced mod r.
func (s *secret) keyGen(ikm, info []byte) bool {
	if len(ikm) < 32 {
		return false
	}
	salt := sha256.Sum256([]byte("BLS-SIG-KEYGEN-SALT-"))
	in := append(append(make([]byte, 0, len(ikm)+1), ikm...), 0)
	defer clear(in)
	keyInfo := append(append(make([]byte, 0, len(info)+2), info...), 0, 48)
	var okm [48]byte
	defer clear(okm[:])
	for {
		if _, err := io.ReadFull(hkdf.New(sha256.New, in, salt[:], keyInfo), okm[:]); err != nil {
			return false
		}
		s.s.SetBytes(okm[:])
		if s.s.IsZero() == 0 {
			return true
		}
		salt = sha256.Sum256(salt[:])
	}
}

// setBytes sets s from a 32-byte big-endian scalar in [1, r).
func (s *secret) setBytes(b []byte) bool {
	if len(b) != SecretKeySize || s.s.UnmarshalBinary(b) != nil || s.s.IsZero() == 1 {
		s.wipe()
		return false
	}
	return true
}

func (s *secret) appendBytes(dst []byte) []byte {
	b, _ := s.s.MarshalBinary()
	dst = append(dst, b...)
	clear(b)
	return dst
}

func (s *secret) wipe() { s.s = bls12381.Scalar{} }

// point is a public key: a G1 point for min-pk, a G2 point for min-sig.
type point struct {
	g1 *bls12381.G1
	g2 *bls12381.G2
}

func (s *secret) public(alg signer.Algorithm) point {
	if alg == signer.BLS12381MinPK {
		p := new(bls12381.G1)
		p.ScalarMult(&s.s, bls12381.G1Generator())
		return point{g1: p}
	}
	p := new(bls12381.G2)
	p.ScalarMult(&s.s, bls12381.G2Generator())
	return point{g2: p}
}

func (p point) serialize() []byte {
	if p.g1 != nil {
		return p.g1.Bytes()
	}
	return p.g2.Bytes()
}

func (p point) compress() []byte {
	if p.g1 != nil {
		return p.g1.BytesCompressed()
	}
	return p.g2.BytesCompressed()
}

// parsePoint decodes a public key of alg in its serialized or compressed
// form; circl's SetBytes checks that the point is on the curve and in the
// prime-order subgroup, and the checks here that it is not at infinity and
// that the encoding is the canonical one.
func parsePoint(alg signer.Algorithm, b []byte) (point, error) {
	var p point
	var ok, inf bool
	switch alg {
	case signer.BLS12381MinPK:
		if !(len(b) == SerializedPublicKeySizeMinPK && b[0]&0xe0 == 0) && !(len(b) == CompressedPublicKeySizeMinPK && b[0]&0x80 != 0) {
			return p, fmt.Errorf("%d-byte %v public key, want %d serialized or %d compressed: %w",
				len(b), alg, SerializedPublicKeySizeMinPK, CompressedPublicKeySizeMinPK, signer.ErrInvalidKey)
		}
		q := new(bls12381.G1)
		ok = q.SetBytes(b) == nil && (bytes.Equal(b, q.Bytes()) || bytes.Equal(b, q.BytesCompressed()))
		inf = ok && q.IsIdentity()
		p.g1 = q
	case signer.BLS12381MinSig:
		if !(len(b) == SerializedPublicKeySizeMinSig && b[0]&0xe0 == 0) && !(len(b) == CompressedPublicKeySizeMinSig && b[0]&0x80 != 0) {
			return p, fmt.Errorf("%d-byte %v public key, want %d serialized or %d compressed: %w",
				len(b), alg, SerializedPublicKeySizeMinSig, CompressedPublicKeySizeMinSig, signer.ErrInvalidKey)
		}
		q := new(bls12381.G2)
		ok = q.SetBytes(b) == nil && (bytes.Equal(b, q.Bytes()) || bytes.Equal(b, q.BytesCompressed()))
		inf = ok && q.IsIdentity()
		p.g2 = q
	default:
		return p, fmt.Errorf("%v is not a BLS algorithm: %w", alg, signer.ErrUnsupported)
	}
	if inf {
		return point{}, fmt.Errorf("%v public key is the point at infinity: %w", alg, signer.ErrInvalidKey)
	}
	if !ok {
		return point{}, fmt.Errorf("%v public key is not a canonical encoding of a point of the subgroup: %w", alg, signer.ErrInvalidKey)
	}
	return p, nil
}

// sign signs msg with dst; the signature is the compressed point.
func (s *secret) sign(alg signer.Algorithm, msg, dst []byte) []byte {
	if alg == signer.BLS12381MinPK {
		var q bls12381.G2
		q.Hash(msg, dst)
		q.ScalarMult(&s.s, &q)
		return q.BytesCompressed()
	}
	var q bls12381.G1
	q.Hash(msg, dst)
	q.ScalarMult(&s.s, &q)
	return q.BytesCompressed()
}

// sigPoint is a decoded signature: a G2 point for min-pk, G1 for min-sig.
type sigPoint struct {
	g1  *bls12381.G1
	g2  *bls12381.G2
	inf bool
}

// parseSig decodes a compressed signature that must be a canonical
// encoding of a point of the prime-order subgroup; the point at infinity
// is let through (as CometBFT lets it through) and never verifies.
func parseSig(alg signer.Algorithm, sig []byte) (sigPoint, error) {
	var p sigPoint
	ok := false
	if alg == signer.BLS12381MinPK {
		q := new(bls12381.G2)
		ok = len(sig) == SignatureSizeMinPK && q.SetBytes(sig) == nil && bytes.Equal(q.BytesCompressed(), sig)
		p.g2, p.inf = q, ok && q.IsIdentity()
	} else {
		q := new(bls12381.G1)
		ok = len(sig) == SignatureSizeMinSig && q.SetBytes(sig) == nil && bytes.Equal(q.BytesCompressed(), sig)
		p.g1, p.inf = q, ok && q.IsIdentity()
	}
	if !ok {
		return sigPoint{}, fmt.Errorf("%v signature is not a canonical compressed point of the subgroup: %w", alg, signer.ErrInvalidSignature)
	}
	return p, nil
}

// pairingCheck reports whether Π e(pk_i, H(m_i)) = e(g, sig), for min-pk,
// or the same with the groups swapped for min-sig. No point given is at
// infinity (circl's pairing affinizes its inputs).
func pairingCheck(alg signer.Algorithm, pubs []point, msgs [][]byte, s sigPoint, dst []byte) bool {
	n := len(pubs)
	g1s := make([]*bls12381.G1, n+1)
	g2s := make([]*bls12381.G2, n+1)
	signs := make([]int, n+1)
	for i := range n {
		signs[i] = 1
		if alg == signer.BLS12381MinPK {
			h := new(bls12381.G2)
			h.Hash(msgs[i], dst)
			g1s[i], g2s[i] = pubs[i].g1, h
		} else {
			h := new(bls12381.G1)
			h.Hash(msgs[i], dst)
			g1s[i], g2s[i] = h, pubs[i].g2
		}
	}
	signs[n] = -1
	if alg == signer.BLS12381MinPK {
		g1s[n], g2s[n] = bls12381.G1Generator(), s.g2
	} else {
		g1s[n], g2s[n] = s.g1, bls12381.G2Generator()
	}
	return bls12381.ProdPairFrac(g1s, g2s, signs).IsIdentity()
}

func verifyPoint(alg signer.Algorithm, pub point, msg, sig, dst []byte) bool {
	s, err := parseSig(alg, sig)
	if err != nil || s.inf {
		return false // e(pk, H(m)) is not 1 for a key and hash other than infinity
	}
	return pairingCheck(alg, []point{pub}, [][]byte{msg}, s, dst)
}

// aggregateSigs adds signatures, each checked as parseSig checks one.
func aggregateSigs(alg signer.Algorithm, sigs [][]byte) ([]byte, error) {
	var sum1 bls12381.G1
	var sum2 bls12381.G2
	sum1.SetIdentity()
	sum2.SetIdentity()
	for i, sig := range sigs {
		s, err := parseSig(alg, sig)
		if err != nil {
			return nil, fmt.Errorf("signature %d: %w", i, err)
		}
		if alg == signer.BLS12381MinPK {
			sum2.Add(&sum2, s.g2)
		} else {
			sum1.Add(&sum1, s.g1)
		}
	}
	if alg == signer.BLS12381MinPK {
		return sum2.BytesCompressed(), nil
	}
	return sum1.BytesCompressed(), nil
}

// aggregatePoints adds public keys that were validated when parsed. It
// reports false when the sum is the point at infinity.
func aggregatePoints(alg signer.Algorithm, pubs []point) (point, bool) {
	if alg == signer.BLS12381MinPK {
		sum := new(bls12381.G1)
		sum.SetIdentity()
		for _, p := range pubs {
			sum.Add(sum, p.g1)
		}
		return point{g1: sum}, !sum.IsIdentity()
	}
	sum := new(bls12381.G2)
	sum.SetIdentity()
	for _, p := range pubs {
		sum.Add(sum, p.g2)
	}
	return point{g2: sum}, !sum.IsIdentity()
}

// aggregateVerify checks one aggregate signature over msgs[i] by pubs[i].
func aggregateVerify(alg signer.Algorithm, pubs []point, msgs [][]byte, sig, dst []byte) bool {
	s, err := parseSig(alg, sig)
	if err != nil || s.inf {
		return false
	}
	return pairingCheck(alg, pubs, msgs, s, dst)
}
