package bls

import (
	"bytes"
	"crypto"
	"fmt"

	"github.com/signerkit/signerkit/signer"
)

// Sizes of keys and signatures, in bytes.
const (
	SecretKeySize = 32 // a big-endian scalar in [1, r), as CometBFT's PrivKey.Bytes

	SerializedPublicKeySizeMinPK = 96 // uncompressed G1, as CometBFT's PubKey.Bytes
	CompressedPublicKeySizeMinPK = 48 // compressed G1, as Ethereum carries keys
	SignatureSizeMinPK           = 96 // compressed G2

	SerializedPublicKeySizeMinSig = 192 // uncompressed G2
	CompressedPublicKeySizeMinSig = 96  // compressed G2
	SignatureSizeMinSig           = 48  // compressed G1
)

// Domain separation tags (the IETF draft's ciphersuite IDs).
const (
	// DSTMinPK is what BLS12381MinPK signs with: the basic scheme, as
	// CometBFT v0.40 signs.
	DSTMinPK = "BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_NUL_"
	// DSTMinSig is what BLS12381MinSig signs with: the basic scheme.
	DSTMinSig = "BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_NUL_"
	// DSTMinPKPoP and DSTMinSigPoP are the proof-of-possession scheme's
	// signature tags; Ethereum's consensus layer signs with DSTMinPKPoP.
	// Use them through SignDST and VerifyDST.
	DSTMinPKPoP  = "BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_POP_"
	DSTMinSigPoP = "BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_POP_"
	// PopDSTMinPK and PopDSTMinSig are the tags of proofs of possession
	// (PopProve, PopVerify).
	PopDSTMinPK  = "BLS_POP_BLS12381G2_XMD:SHA-256_SSWU_RO_POP_"
	PopDSTMinSig = "BLS_POP_BLS12381G1_XMD:SHA-256_SSWU_RO_POP_"
)

// DST returns the tag that alg's signatures use: DSTMinPK or DSTMinSig.
func DST(alg signer.Algorithm) string {
	if alg == signer.BLS12381MinSig {
		return DSTMinSig
	}
	return DSTMinPK
}

func popDST(alg signer.Algorithm) []byte {
	if alg == signer.BLS12381MinSig {
		return []byte(PopDSTMinSig)
	}
	return []byte(PopDSTMinPK)
}

// SignatureSize returns the size of alg's signatures, or 0.
func SignatureSize(alg signer.Algorithm) int {
	switch alg {
	case signer.BLS12381MinPK:
		return SignatureSizeMinPK
	case signer.BLS12381MinSig:
		return SignatureSizeMinSig
	}
	return 0
}

// PublicKey is a BLS12-381 public key that has been checked: a point on
// the curve, in the prime-order subgroup, not the point at infinity. It
// implements signer.BLSPublicKey, so signer.Algorithm.Verify checks its
// signatures. A PublicKey is immutable and safe for concurrent use.
type PublicKey struct {
	alg        signer.Algorithm
	p          point
	serialized []byte
	compressed []byte
}

var _ signer.BLSPublicKey = (*PublicKey)(nil)

func newPublicKey(alg signer.Algorithm, p point) *PublicKey {
	return &PublicKey{alg: alg, p: p, serialized: p.serialize(), compressed: p.compress()}
}

// ParsePublicKey decodes a public key of alg (signer.BLS12381MinPK or
// BLS12381MinSig) from its serialized form (96 bytes for min-pk, as
// CometBFT writes it; 192 for min-sig) or its compressed form (48 bytes
// for min-pk, as Ethereum writes it; 96 for min-sig). It refuses, with an
// error wrapping signer.ErrInvalidKey, points off the curve, outside the
// prime-order subgroup or at infinity, and encodings that are not the
// canonical one of their point; ErrUnsupported when alg is not BLS or the
// build has no BLS implementation.
func ParsePublicKey(b []byte, alg signer.Algorithm) (*PublicKey, error) {
	if !alg.IsBLS() {
		return nil, fmt.Errorf("bls: %v is not a BLS algorithm: %w", alg, signer.ErrUnsupported)
	}
	if err := available(); err != nil {
		return nil, err
	}
	p, err := parsePoint(alg, b)
	if err != nil {
		return nil, fmt.Errorf("bls: %w", err)
	}
	return newPublicKey(alg, p), nil
}

// Algorithm returns signer.BLS12381MinPK or BLS12381MinSig (0 for a nil
// key).
func (k *PublicKey) Algorithm() signer.Algorithm {
	if k == nil {
		return 0
	}
	return k.alg
}

// Bytes returns the key's serialized (uncompressed) form: for min-pk, the
// 96 bytes of CometBFT's PubKey.Bytes. It returns a copy.
func (k *PublicKey) Bytes() []byte {
	if k == nil {
		return nil
	}
	return bytes.Clone(k.serialized)
}

// Compressed returns the key's compressed form (48 bytes for min-pk, 96
// for min-sig), which the IETF draft's proofs of possession sign.
func (k *PublicKey) Compressed() []byte {
	if k == nil {
		return nil
	}
	return bytes.Clone(k.compressed)
}

// Equal reports whether x is a *PublicKey of the same algorithm and point.
func (k *PublicKey) Equal(x crypto.PublicKey) bool {
	o, ok := x.(*PublicKey)
	return ok && k != nil && o != nil && k.alg == o.alg && bytes.Equal(k.serialized, o.serialized)
}

// VerifySignature checks sig over msg with the key's algorithm's DST
// (DSTMinPK or DSTMinSig), as CometBFT's PubKey.VerifySignature does. It
// returns nil or an error wrapping signer.ErrInvalidSignature.
func (k *PublicKey) VerifySignature(msg, sig []byte) error {
	if k == nil {
		return fmt.Errorf("bls: nil public key: %w", signer.ErrInvalidSignature)
	}
	return k.VerifyDST(msg, sig, []byte(DST(k.alg)))
}

// VerifyDST is VerifySignature with another DST, such as DSTMinPKPoP.
func (k *PublicKey) VerifyDST(msg, sig, dst []byte) error {
	if k == nil || !verifyPoint(k.alg, k.p, msg, sig, dst) {
		return fmt.Errorf("bls: %v signature does not verify: %w", k.Algorithm(), signer.ErrInvalidSignature)
	}
	return nil
}

// PopVerify checks a proof of possession of pub's private key (the IETF
// draft's PopVerify: a signature of pub's compressed form under
// PopDSTMinPK or PopDSTMinSig). Keys whose proofs verify may be used with
// FastAggregateVerify. It returns nil or an error wrapping
// signer.ErrInvalidSignature.
func PopVerify(pub *PublicKey, proof []byte) error {
	if pub == nil || !verifyPoint(pub.alg, pub.p, pub.compressed, proof, popDST(pub.alg)) {
		return fmt.Errorf("bls: proof of possession does not verify: %w", signer.ErrInvalidSignature)
	}
	return nil
}

// AggregateSignatures adds signatures of alg into one of the same size.
// Each must be a canonical compressed point of the prime-order subgroup;
// otherwise, or when there are none, the error wraps
// signer.ErrInvalidSignature and names the first bad one by index.
func AggregateSignatures(sigs [][]byte, alg signer.Algorithm) ([]byte, error) {
	if !alg.IsBLS() {
		return nil, fmt.Errorf("bls: %v is not a BLS algorithm: %w", alg, signer.ErrUnsupported)
	}
	if err := available(); err != nil {
		return nil, err
	}
	if len(sigs) == 0 {
		return nil, fmt.Errorf("bls: no signatures to aggregate: %w", signer.ErrInvalidSignature)
	}
	agg, err := aggregateSigs(alg, sigs)
	if err != nil {
		return nil, fmt.Errorf("bls: %w", err)
	}
	return agg, nil
}

// keysOf checks that pubs are non-empty, non-nil and of one algorithm.
func keysOf(pubs []*PublicKey) (signer.Algorithm, []point, error) {
	if len(pubs) == 0 {
		return 0, nil, fmt.Errorf("bls: no public keys: %w", signer.ErrInvalidSignature)
	}
	pts := make([]point, len(pubs))
	for i, k := range pubs {
		if k == nil {
			return 0, nil, fmt.Errorf("bls: public key %d is nil: %w", i, signer.ErrInvalidKey)
		}
		if k.alg != pubs[0].alg {
			return 0, nil, fmt.Errorf("bls: public key %d is %v, key 0 %v: %w", i, k.alg, pubs[0].alg, signer.ErrInvalidKey)
		}
		pts[i] = k.p
	}
	return pubs[0].alg, pts, nil
}

// FastAggregateVerify checks sig, the aggregate of signatures by every key
// of pubs over the one message msg, with dst (nil means the keys'
// algorithm's DST). Every key must have proved possession of its private
// key (PopVerify) before: without that, one who chooses a key after seeing
// the others can forge an aggregate (a rogue-key attack). It returns nil,
// or an error wrapping signer.ErrInvalidSignature (or ErrInvalidKey for
// keys that are nil, of mixed algorithms, or that add up to the point at
// infinity).
func FastAggregateVerify(pubs []*PublicKey, msg, sig, dst []byte) error {
	alg, pts, err := keysOf(pubs)
	if err != nil {
		return err
	}
	sum, ok := aggregatePoints(alg, pts)
	if !ok {
		return fmt.Errorf("bls: the public keys add up to the point at infinity: %w", signer.ErrInvalidKey)
	}
	if dst == nil {
		dst = []byte(DST(alg))
	}
	if !verifyPoint(alg, sum, msg, sig, dst) {
		return fmt.Errorf("bls: %v aggregate signature does not verify: %w", alg, signer.ErrInvalidSignature)
	}
	return nil
}

// AggregateVerify checks sig, the aggregate of signatures by pubs[i] over
// msgs[i], with dst (nil means the keys' algorithm's DST). As the IETF
// draft's basic scheme requires, the messages must be distinct; repeated
// messages, a count that differs from the keys', or a signature that does
// not verify return an error wrapping signer.ErrInvalidSignature.
func AggregateVerify(pubs []*PublicKey, msgs [][]byte, sig, dst []byte) error {
	alg, pts, err := keysOf(pubs)
	if err != nil {
		return err
	}
	if len(msgs) != len(pubs) {
		return fmt.Errorf("bls: %d messages for %d public keys: %w", len(msgs), len(pubs), signer.ErrInvalidSignature)
	}
	seen := make(map[string]struct{}, len(msgs))
	for i, m := range msgs {
		if _, dup := seen[string(m)]; dup {
			return fmt.Errorf("bls: message %d repeats an earlier one: %w", i, signer.ErrInvalidSignature)
		}
		seen[string(m)] = struct{}{}
	}
	if dst == nil {
		dst = []byte(DST(alg))
	}
	if !aggregateVerify(alg, pts, msgs, sig, dst) {
		return fmt.Errorf("bls: %v aggregate signature does not verify: %w", alg, signer.ErrInvalidSignature)
	}
	return nil
}
