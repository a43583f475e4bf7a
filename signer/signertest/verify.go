package signertest

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/asn1"
	"errors"
	"fmt"
	"math/big"

	"github.com/cloudflare/circl/ecc/bls12381"

	"github.com/signerkit/signerkit/internal/eckey"
	"github.com/signerkit/signerkit/internal/refsecp256k1"
	"github.com/signerkit/signerkit/signer"
)

// VerifyStd checks sig, in the form SignContext returns for alg, over msg
// under pub using only the standard library (crypto/ed25519, crypto/ecdsa,
// crypto/rsa), independently of signer's own Verify. For secp256k1 the
// standard library's generic ECDSA verification runs on the curve that
// signer.Secp256k1 returns (decred's arithmetic), so the signature is also
// checked by a textbook implementation that shares no code with it; S must
// be low. The standard library has no BLS: BLS signatures are checked by
// VerifyBLS, on github.com/cloudflare/circl, which shares no code with the
// blst that package bls signs with.
func VerifyStd(alg signer.Algorithm, pub crypto.PublicKey, msg, sig []byte) error {
	bad := func(why string) error { return fmt.Errorf("signertest: %v signature %s", alg, why) }
	if !alg.Valid() {
		return fmt.Errorf("signertest: unknown algorithm %v", alg)
	}
	if err := alg.CheckKey(pub); err != nil {
		return fmt.Errorf("signertest: public key is %T, not a valid %v key: %w", pub, alg, err)
	}
	switch alg {
	case signer.BLS12381MinPK, signer.BLS12381MinSig:
		k, ok := pub.(signer.BLSPublicKey)
		if !ok {
			return fmt.Errorf("signertest: public key is %T, not a signer.BLSPublicKey", pub)
		}
		return VerifyBLS(alg, k.Bytes(), msg, sig, nil)
	case signer.Ed25519:
		k, ok := pub.(ed25519.PublicKey)
		if !ok {
			return fmt.Errorf("signertest: public key is %T, not ed25519.PublicKey", pub)
		}
		if len(sig) != ed25519.SignatureSize {
			return bad(fmt.Sprintf("is %d bytes, want %d", len(sig), ed25519.SignatureSize))
		}
		if !ed25519.Verify(k, msg, sig) {
			return bad("does not verify with crypto/ed25519")
		}
		return nil
	case signer.ECDSAP256, signer.ECDSAP384, signer.ECDSASecp256k1:
		k, ok := pub.(*ecdsa.PublicKey)
		if !ok {
			return fmt.Errorf("signertest: public key is %T, not *ecdsa.PublicKey", pub)
		}
		size := (alg.Curve().Params().BitSize + 7) / 8
		if len(sig) != 2*size {
			return bad(fmt.Sprintf("is %d bytes, want r‖s of %d", len(sig), 2*size))
		}
		r, s := new(big.Int).SetBytes(sig[:size]), new(big.Int).SetBytes(sig[size:])
		if alg == signer.ECDSASecp256k1 && !lowS(k, s) {
			return bad("has a high S (secp256k1 signatures must be low-S)")
		}
		if !ecdsa.Verify(k, digest(alg, msg), r, s) {
			return bad("does not verify with crypto/ecdsa")
		}
		// crypto/ecdsa runs on decred's secp256k1 arithmetic there; check
		// once more with a textbook implementation that shares no code.
		if x, y := eckey.Coordinates(k); alg == signer.ECDSASecp256k1 && !refsecp256k1.Verify(x, y, digest(alg, msg), r, s) {
			return bad("does not verify with the reference secp256k1")
		}
		return nil
	case signer.RSAPKCS1v15, signer.RSAPSS:
		k, ok := pub.(*rsa.PublicKey)
		if !ok {
			return fmt.Errorf("signertest: public key is %T, not *rsa.PublicKey", pub)
		}
		if len(sig) != k.Size() {
			return bad(fmt.Sprintf("is %d bytes, want the modulus size %d", len(sig), k.Size()))
		}
		var err error
		if alg == signer.RSAPSS {
			err = rsa.VerifyPSS(k, crypto.SHA256, digest(alg, msg), sig, &rsa.PSSOptions{SaltLength: sha256.Size})
		} else {
			err = rsa.VerifyPKCS1v15(k, crypto.SHA256, digest(alg, msg), sig)
		}
		if err != nil {
			return bad("does not verify with crypto/rsa: " + err.Error())
		}
		return nil
	}
	return fmt.Errorf("signertest: unknown algorithm %v", alg)
}

// verifySignerOpts checks a crypto.Signer.Sign result made with opts over
// digest (the message itself for pure Ed25519) with the standard library.
func verifySignerOpts(alg signer.Algorithm, pub crypto.PublicKey, digest, sig []byte, opts crypto.SignerOpts) error {
	switch k := pub.(type) {
	case ed25519.PublicKey:
		o := &ed25519.Options{Hash: opts.HashFunc()}
		if eo, ok := opts.(*ed25519.Options); ok {
			o = eo
		}
		return ed25519.VerifyWithOptions(k, digest, sig, o)
	case *ecdsa.PublicKey:
		if !ecdsa.VerifyASN1(k, digest, sig) {
			return errors.New("ASN.1 ECDSA signature does not verify with crypto/ecdsa")
		}
		if alg == signer.ECDSASecp256k1 {
			var v struct{ R, S *big.Int }
			if _, err := asn1.Unmarshal(sig, &v); err != nil || !lowS(k, v.S) {
				return errors.New("secp256k1 ASN.1 signature has a high S")
			}
		}
		return nil
	case *rsa.PublicKey:
		if pss, ok := opts.(*rsa.PSSOptions); ok {
			// Verify with the salt length that was asked for, not any.
			want := &rsa.PSSOptions{SaltLength: pss.SaltLength, Hash: pss.Hash}
			if pss.SaltLength == rsa.PSSSaltLengthEqualsHash {
				want.SaltLength = pss.Hash.Size()
			}
			return rsa.VerifyPSS(k, pss.Hash, digest, sig, want)
		}
		return rsa.VerifyPKCS1v15(k, opts.HashFunc(), digest, sig)
	}
	return fmt.Errorf("unknown public key type %T", pub)
}

func lowS(k *ecdsa.PublicKey, s *big.Int) bool {
	half := new(big.Int).Rsh(k.Curve.Params().N, 1)
	return s.Cmp(half) <= 0
}

func digest(alg signer.Algorithm, msg []byte) []byte {
	switch alg.Hash() {
	case crypto.SHA256:
		d := sha256.Sum256(msg)
		return d[:]
	case crypto.SHA384:
		d := sha512.Sum384(msg)
		return d[:]
	}
	return msg
}

// The basic-scheme DSTs of the BLS algorithms (the IETF draft's
// ciphersuite IDs), written out here rather than taken from package bls.
const (
	dstBLSMinPK  = "BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_NUL_"
	dstBLSMinSig = "BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_NUL_"
)

// VerifyBLS checks a BLS12-381 signature sig (compressed, 96 bytes for
// min-pk, 48 for min-sig) over msg under the public key pub (serialized or
// compressed, as the IETF draft and Zcash encode points) with the hash to
// curve tag dst, or with the algorithm's basic-scheme DST when dst is nil.
// It uses github.com/cloudflare/circl's pairing, which shares no code with
// blst, and refuses keys and signatures that are not canonical encodings
// of points of the prime-order subgroup, and points at infinity.
func VerifyBLS(alg signer.Algorithm, pub, msg, sig, dst []byte) error {
	bad := func(why string) error { return fmt.Errorf("signertest: %v signature %s", alg, why) }
	switch alg {
	case signer.BLS12381MinPK:
		if dst == nil {
			dst = []byte(dstBLSMinPK)
		}
		var k bls12381.G1
		if err := k.SetBytes(pub); err != nil || k.IsIdentity() || !sameBytes(pub, k.Bytes(), k.BytesCompressed()) {
			return fmt.Errorf("signertest: %v public key is not a canonical point of G1 other than infinity", alg)
		}
		var s bls12381.G2
		if len(sig) != 96 {
			return bad(fmt.Sprintf("is %d bytes, want 96", len(sig)))
		}
		if err := s.SetBytes(sig); err != nil || s.IsIdentity() || !bytes.Equal(sig, s.BytesCompressed()) {
			return bad("is not a canonical compressed point of G2 other than infinity")
		}
		var h bls12381.G2
		h.Hash(msg, dst)
		// e(pk, H(m)) · e(g1, sig)⁻¹ = 1
		if !bls12381.ProdPairFrac([]*bls12381.G1{&k, bls12381.G1Generator()}, []*bls12381.G2{&h, &s}, []int{1, -1}).IsIdentity() {
			return bad("does not verify with circl")
		}
		return nil
	case signer.BLS12381MinSig:
		if dst == nil {
			dst = []byte(dstBLSMinSig)
		}
		var k bls12381.G2
		if err := k.SetBytes(pub); err != nil || k.IsIdentity() || !sameBytes(pub, k.Bytes(), k.BytesCompressed()) {
			return fmt.Errorf("signertest: %v public key is not a canonical point of G2 other than infinity", alg)
		}
		var s bls12381.G1
		if len(sig) != 48 {
			return bad(fmt.Sprintf("is %d bytes, want 48", len(sig)))
		}
		if err := s.SetBytes(sig); err != nil || s.IsIdentity() || !bytes.Equal(sig, s.BytesCompressed()) {
			return bad("is not a canonical compressed point of G1 other than infinity")
		}
		var h bls12381.G1
		h.Hash(msg, dst)
		// e(H(m), pk) · e(sig, g2)⁻¹ = 1
		if !bls12381.ProdPairFrac([]*bls12381.G1{&h, &s}, []*bls12381.G2{&k, bls12381.G2Generator()}, []int{1, -1}).IsIdentity() {
			return bad("does not verify with circl")
		}
		return nil
	}
	return fmt.Errorf("signertest: %v is not a BLS algorithm", alg)
}

// sameBytes reports whether b is one of the two encodings of its point.
func sameBytes(b, serialized, compressed []byte) bool {
	return bytes.Equal(b, serialized) || bytes.Equal(b, compressed)
}
