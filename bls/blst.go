//go:build cgo

package bls

import (
	"bytes"
	"fmt"

	blst "github.com/supranational/blst/bindings/go"

	"github.com/signerkit/signerkit/signer"
)

// Backend names the implementation this build signs with: "blst" when
// built with cgo, else "circl" (see the package doc).
const Backend = "blst"

// secret is a private scalar held by blst. Its zero value is no key.
type secret struct{ sk blst.SecretKey }

// keyGen runs the IETF draft's KeyGen (draft-irtf-cfrg-bls-signature-04
// and later, salt "BLS-SIG-KEYGEN-SALT-") on ikm of at least 32 bytes.
func (s *secret) keyGen(ikm, info []byte) bool {
	k := blst.KeyGen(ikm, info)
	if k == nil {
		return false
	}
	s.sk = *k
	k.Zeroize()
	return true
}

// setBytes sets s from a 32-byte big-endian scalar in [1, r).
func (s *secret) setBytes(b []byte) bool {
	if s.sk.Deserialize(b) == nil {
		s.sk.Zeroize() // Deserialize leaves what it read on failure
		return false
	}
	return true
}

func (s *secret) appendBytes(dst []byte) []byte {
	b := s.sk.Serialize()
	dst = append(dst, b...)
	clear(b)
	return dst
}

func (s *secret) wipe() { s.sk.Zeroize() }

// point is a public key: a G1 point for min-pk, a G2 point for min-sig.
type point struct {
	g1 *blst.P1Affine
	g2 *blst.P2Affine
}

func (s *secret) public(alg signer.Algorithm) point {
	if alg == signer.BLS12381MinPK {
		return point{g1: new(blst.P1Affine).From(&s.sk)}
	}
	return point{g2: new(blst.P2Affine).From(&s.sk)}
}

func (p point) serialize() []byte {
	if p.g1 != nil {
		return p.g1.Serialize()
	}
	return p.g2.Serialize()
}

func (p point) compress() []byte {
	if p.g1 != nil {
		return p.g1.Compress()
	}
	return p.g2.Compress()
}

// parsePoint decodes a public key of alg in its serialized or compressed
// form and checks it: on the curve, in the prime-order subgroup, not the
// point at infinity, and encoded canonically (blst would read a 96-byte
// input with the compression flag set as its first 48 bytes, and ignore
// the rest).
func parsePoint(alg signer.Algorithm, b []byte) (point, error) {
	var p point
	ok := false
	switch alg {
	case signer.BLS12381MinPK:
		q := new(blst.P1Affine)
		switch {
		case len(b) == SerializedPublicKeySizeMinPK && b[0]&0xe0 == 0:
			ok = q.Deserialize(b) != nil && bytes.Equal(q.Serialize(), b)
		case len(b) == CompressedPublicKeySizeMinPK && b[0]&0x80 != 0:
			ok = q.Uncompress(b) != nil && bytes.Equal(q.Compress(), b)
		default:
			return p, fmt.Errorf("%d-byte %v public key, want %d serialized or %d compressed: %w",
				len(b), alg, SerializedPublicKeySizeMinPK, CompressedPublicKeySizeMinPK, signer.ErrInvalidKey)
		}
		if ok && !q.KeyValidate() {
			return p, fmt.Errorf("%v public key is the point at infinity or outside the G1 subgroup: %w", alg, signer.ErrInvalidKey)
		}
		p.g1 = q
	case signer.BLS12381MinSig:
		q := new(blst.P2Affine)
		switch {
		case len(b) == SerializedPublicKeySizeMinSig && b[0]&0xe0 == 0:
			ok = q.Deserialize(b) != nil && bytes.Equal(q.Serialize(), b)
		case len(b) == CompressedPublicKeySizeMinSig && b[0]&0x80 != 0:
			ok = q.Uncompress(b) != nil && bytes.Equal(q.Compress(), b)
		default:
			return p, fmt.Errorf("%d-byte %v public key, want %d serialized or %d compressed: %w",
				len(b), alg, SerializedPublicKeySizeMinSig, CompressedPublicKeySizeMinSig, signer.ErrInvalidKey)
		}
		if ok && !q.KeyValidate() {
			return p, fmt.Errorf("%v public key is the point at infinity or outside the G2 subgroup: %w", alg, signer.ErrInvalidKey)
		}
		p.g2 = q
	default:
		return p, fmt.Errorf("%v is not a BLS algorithm: %w", alg, signer.ErrUnsupported)
	}
	if !ok {
		return point{}, fmt.Errorf("%v public key is not a canonical encoding of a curve point: %w", alg, signer.ErrInvalidKey)
	}
	return p, nil
}

// sign signs msg with dst; the signature is the compressed point.
func (s *secret) sign(alg signer.Algorithm, msg, dst []byte) []byte {
	if alg == signer.BLS12381MinPK {
		return new(blst.P2Affine).Sign(&s.sk, msg, dst).Compress()
	}
	return new(blst.P1Affine).Sign(&s.sk, msg, dst).Compress()
}

// sigPoint is a decoded signature: a G2 point for min-pk, G1 for min-sig.
type sigPoint struct {
	g1 *blst.P1Affine
	g2 *blst.P2Affine
}

// parseSig decodes a compressed signature and checks that it is a
// canonical encoding of a point of the prime-order subgroup, as CometBFT
// does (Uncompress, then SigValidate(false): the point at infinity, which
// an aggregate may be, is let through to fail verification).
func parseSig(alg signer.Algorithm, sig []byte) (sigPoint, error) {
	var p sigPoint
	ok := false
	if alg == signer.BLS12381MinPK {
		q := new(blst.P2Affine)
		ok = len(sig) == SignatureSizeMinPK && q.Uncompress(sig) != nil && q.SigValidate(false) && bytes.Equal(q.Compress(), sig)
		p.g2 = q
	} else {
		q := new(blst.P1Affine)
		ok = len(sig) == SignatureSizeMinSig && q.Uncompress(sig) != nil && q.SigValidate(false) && bytes.Equal(q.Compress(), sig)
		p.g1 = q
	}
	if !ok {
		return sigPoint{}, fmt.Errorf("%v signature is not a canonical compressed point of the subgroup: %w", alg, signer.ErrInvalidSignature)
	}
	return p, nil
}

func verifyPoint(alg signer.Algorithm, pub point, msg, sig, dst []byte) bool {
	s, err := parseSig(alg, sig)
	if err != nil {
		return false
	}
	// The key was validated when parsed, the signature just now.
	if alg == signer.BLS12381MinPK {
		return s.g2.Verify(false, pub.g1, false, msg, dst)
	}
	return s.g1.Verify(false, pub.g2, false, msg, dst)
}

// aggregateSigs adds signatures, each checked as parseSig checks one.
func aggregateSigs(alg signer.Algorithm, sigs [][]byte) ([]byte, error) {
	if alg == signer.BLS12381MinPK {
		var agg blst.P2Aggregate
		for i, sig := range sigs {
			s, err := parseSig(alg, sig)
			if err != nil {
				return nil, fmt.Errorf("signature %d: %w", i, err)
			}
			agg.Add(s.g2, false)
		}
		return agg.ToAffine().Compress(), nil
	}
	var agg blst.P1Aggregate
	for i, sig := range sigs {
		s, err := parseSig(alg, sig)
		if err != nil {
			return nil, fmt.Errorf("signature %d: %w", i, err)
		}
		agg.Add(s.g1, false)
	}
	return agg.ToAffine().Compress(), nil
}

// aggregatePoints adds public keys that were validated when parsed. It
// reports false when the sum is the point at infinity, which no key may be
// (the IETF draft's FastAggregateVerify runs KeyValidate on the sum).
func aggregatePoints(alg signer.Algorithm, pubs []point) (point, bool) {
	var sum point
	if alg == signer.BLS12381MinPK {
		var agg blst.P1Aggregate
		for _, p := range pubs {
			agg.Add(p.g1, false)
		}
		sum.g1 = agg.ToAffine()
	} else {
		var agg blst.P2Aggregate
		for _, p := range pubs {
			agg.Add(p.g2, false)
		}
		sum.g2 = agg.ToAffine()
	}
	return sum, sum.serialize()[0]&0x40 == 0 // the infinity flag
}

// aggregateVerify checks one aggregate signature over msgs[i] by pubs[i].
func aggregateVerify(alg signer.Algorithm, pubs []point, msgs [][]byte, sig, dst []byte) bool {
	s, err := parseSig(alg, sig)
	if err != nil {
		return false
	}
	ms := make([]blst.Message, len(msgs))
	copy(ms, msgs)
	if alg == signer.BLS12381MinPK {
		ps := make([]*blst.P1Affine, len(pubs))
		for i, p := range pubs {
			ps[i] = p.g1
		}
		return s.g2.AggregateVerify(false, ps, false, ms, dst)
	}
	ps := make([]*blst.P2Affine, len(pubs))
	for i, p := range pubs {
		ps[i] = p.g2
	}
	return s.g1.AggregateVerify(false, ps, false, ms, dst)
}

// available reports whether this build can do BLS arithmetic.
func available() error { return nil }
