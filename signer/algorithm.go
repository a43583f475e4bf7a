package signer

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"fmt"
	"math/big"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"

	"github.com/signerkit/signerkit/internal/eckey"
)

// Algorithm names a signature algorithm together with the hash and the
// wire form of the signatures that SignContext returns.
type Algorithm uint8

// The algorithms a Signer may use. The zero Algorithm is invalid.
const (
	// Ed25519 (RFC 8032, pure). SignContext returns the 64-byte signature.
	Ed25519 Algorithm = iota + 1
	// ECDSAP256 is ECDSA on NIST P-256 over SHA-256. SignContext returns
	// r‖s, 32 bytes each, big-endian.
	ECDSAP256
	// ECDSAP384 is ECDSA on NIST P-384 over SHA-384. SignContext returns
	// r‖s, 48 bytes each, big-endian.
	ECDSAP384
	// ECDSASecp256k1 is ECDSA on secp256k1 over SHA-256. SignContext
	// returns r‖s, 32 bytes each, with s ≤ n/2 (low-S), the 64-byte form
	// Cosmos SDK and tm2 verify; signatures with a high S are rejected by
	// Verify, as those chains reject them.
	ECDSASecp256k1
	// RSAPKCS1v15 is RSASSA-PKCS1-v1_5 over SHA-256. SignContext returns a
	// signature as long as the modulus.
	RSAPKCS1v15
	// RSAPSS is RSASSA-PSS over SHA-256 with MGF1-SHA-256 and a 32-byte
	// salt (the salt length equal to the hash, as TLS 1.3 and most HSMs
	// use). SignContext returns a signature as long as the modulus.
	RSAPSS
	// BLS12381MinPK is BLS on BLS12-381 with public keys in G1 and
	// signatures in G2 (minimal-pubkey-size), over the message itself with
	// the DST BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_NUL_, as CometBFT
	// v0.40's bls12381 keys sign. SignContext returns the 96-byte
	// compressed G2 point. Public keys are package bls's *PublicKey (see
	// BLSPublicKey).
	BLS12381MinPK
	// BLS12381MinSig is BLS on BLS12-381 with public keys in G2 and
	// signatures in G1 (minimal-signature-size), over the message itself
	// with the DST BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_NUL_.
	// SignContext returns the 48-byte compressed G1 point.
	BLS12381MinSig

	numAlgorithms = iota
)

// Algorithms lists the algorithms of the standard library's key types,
// in order: Ed25519, ECDSA and RSA, the ones a crypto.Signer serves to
// crypto/x509, crypto/tls and ssh, and that key stores hold. It leaves out
// the BLS algorithms, which only package bls signs and which have no
// standard-library key type: BLSAlgorithms lists those, AllAlgorithms
// both.
func Algorithms() []Algorithm {
	out := make([]Algorithm, 0, numAlgorithms)
	for a := Ed25519; a <= RSAPSS; a++ {
		out = append(out, a)
	}
	return out
}

// BLSAlgorithms lists the BLS12-381 algorithms: BLS12381MinPK and
// BLS12381MinSig.
func BLSAlgorithms() []Algorithm { return []Algorithm{BLS12381MinPK, BLS12381MinSig} }

// AllAlgorithms lists every valid Algorithm, in order: Algorithms, then
// BLSAlgorithms.
func AllAlgorithms() []Algorithm { return append(Algorithms(), BLSAlgorithms()...) }

var algorithmNames = [...]string{
	Ed25519:        "ed25519",
	ECDSAP256:      "p256",
	ECDSAP384:      "p384",
	ECDSASecp256k1: "secp256k1",
	RSAPKCS1v15:    "rsa-pkcs1v15",
	RSAPSS:         "rsa-pss",
	BLS12381MinPK:  "bls12381-minpk",
	BLS12381MinSig: "bls12381-minsig",
}

// String returns the algorithm's short name as used in benchmark names:
// "ed25519", "p256", "p384", "secp256k1", "rsa-pkcs1v15", "rsa-pss",
// "bls12381-minpk", "bls12381-minsig".
func (a Algorithm) String() string {
	if a.Valid() {
		return algorithmNames[a]
	}
	return fmt.Sprintf("Algorithm(%d)", uint8(a))
}

// ParseAlgorithm is the inverse of Algorithm.String.
func ParseAlgorithm(name string) (Algorithm, error) {
	for _, a := range AllAlgorithms() {
		if a.String() == name {
			return a, nil
		}
	}
	return 0, fmt.Errorf("signer: unknown algorithm %q: %w", name, ErrUnsupported)
}

// Valid reports whether a is one of the defined algorithms.
func (a Algorithm) Valid() bool { return a >= Ed25519 && a <= BLS12381MinSig }

// Hash returns the hash that SignContext applies to the message before
// signing, or 0 for Ed25519 and BLS, which sign the message itself (BLS
// hashes it to the curve as part of signing).
func (a Algorithm) Hash() crypto.Hash {
	switch a {
	case ECDSAP256, ECDSASecp256k1, RSAPKCS1v15, RSAPSS:
		return crypto.SHA256
	case ECDSAP384:
		return crypto.SHA384
	}
	return 0
}

// SignerOpts returns the crypto.SignerOpts with which crypto.Signer.Sign
// produces the same kind of signature as SignContext (in ASN.1 form for
// ECDSA).
func (a Algorithm) SignerOpts() crypto.SignerOpts {
	if a == RSAPSS {
		return &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash, Hash: crypto.SHA256}
	}
	return a.Hash()
}

// IsECDSA reports whether a is one of the ECDSA algorithms.
func (a Algorithm) IsECDSA() bool {
	return a == ECDSAP256 || a == ECDSAP384 || a == ECDSASecp256k1
}

// IsRSA reports whether a is one of the RSA algorithms.
func (a Algorithm) IsRSA() bool { return a == RSAPKCS1v15 || a == RSAPSS }

// IsBLS reports whether a is one of the BLS12-381 algorithms.
func (a Algorithm) IsBLS() bool { return a == BLS12381MinPK || a == BLS12381MinSig }

// Digest returns what a signs for msg: the message's hash under a.Hash(),
// or msg itself for Ed25519 and BLS.
func (a Algorithm) Digest(msg []byte) []byte {
	h := a.Hash()
	if h == 0 {
		return msg
	}
	d := h.New()
	d.Write(msg)
	return d.Sum(nil)
}

// Curve returns the elliptic curve of an ECDSA algorithm, or nil.
func (a Algorithm) Curve() elliptic.Curve {
	switch a {
	case ECDSAP256:
		return elliptic.P256()
	case ECDSAP384:
		return elliptic.P384()
	case ECDSASecp256k1:
		return Secp256k1()
	}
	return nil
}

// Secp256k1 returns the secp256k1 curve, as used in *ecdsa.PublicKey values
// that signers in this module return. Its arithmetic is
// github.com/decred/dcrd/dcrec/secp256k1's; crypto/ecdsa's generic
// (deprecated) code path verifies with it.
//
// S256 and the elliptic.Curve interface are deprecated, but an
// *ecdsa.PublicKey needs a Curve, and that is the type crypto.Signer users
// (x509, ssh, the Cosmos tooling) expect; signing and Verify in this module
// use decred's specialised API, not this adaptor.
func Secp256k1() elliptic.Curve {
	//lint:ignore SA1019 an *ecdsa.PublicKey needs an elliptic.Curve; see above
	return secp256k1.S256()
}

// CheckKey reports whether pub is a public key of the kind algorithm a uses.
// A key of another kind gives an error wrapping ErrUnsupported. An Ed25519
// key must moreover pass CheckEd25519PublicKey: one that is of small order
// (under which one constant signature verifies for every message) or not
// canonically encoded gives an error wrapping ErrInvalidKey.
func (a Algorithm) CheckKey(pub crypto.PublicKey) error {
	got, err := algorithmOfKey(pub)
	if err == nil && got == a {
		if a == Ed25519 {
			return CheckEd25519PublicKey(pub.(ed25519.PublicKey))
		}
		return nil
	}
	if a.IsRSA() {
		if k, ok := pub.(*rsa.PublicKey); ok && k != nil && k.N != nil && k.N.Sign() > 0 && k.E > 1 {
			return nil
		}
	}
	return fmt.Errorf("signer: %T is not a %v public key: %w", pub, a, ErrUnsupported)
}

// algorithmOfKey infers the algorithm from a public key. RSA keys are
// ambiguous and return an error.
func algorithmOfKey(pub crypto.PublicKey) (Algorithm, error) {
	switch k := pub.(type) {
	case ed25519.PublicKey:
		if len(k) == ed25519.PublicKeySize {
			return Ed25519, nil
		}
	case *ecdsa.PublicKey:
		if k == nil || k.Curve == nil || !coordinatesInField(k) {
			break
		}
		switch {
		case k.Curve == elliptic.P256():
			return ECDSAP256, nil
		case k.Curve == elliptic.P384():
			return ECDSAP384, nil
		case k.Curve.Params().Name == "secp256k1" && k.Curve.Params().P.Cmp(secp256k1.Params().P) == 0:
			return ECDSASecp256k1, nil
		}
	case *rsa.PublicKey:
		return 0, fmt.Errorf("signer: an RSA public key does not say whether the signer uses PKCS #1 v1.5 or PSS: %w", ErrUnsupported)
	case BLSPublicKey:
		if a, ok := blsKeyAlgorithm(k); ok {
			return a, nil
		}
	}
	return 0, fmt.Errorf("signer: no supported algorithm for a %T public key: %w", pub, ErrUnsupported)
}

// coordinatesInField reports whether an ECDSA public key's coordinates are
// set and in [0, p), so that no encoding of them can stand for another point.
func coordinatesInField(k *ecdsa.PublicKey) bool {
	p := k.Curve.Params().P
	in := func(v *big.Int) bool { return v != nil && v.Sign() >= 0 && v.Cmp(p) < 0 }
	x, y := eckey.Coordinates(k)
	return in(x) && in(y)
}
