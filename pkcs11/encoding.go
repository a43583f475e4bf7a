package pkcs11

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/asn1"
	"fmt"
	"math/big"

	"github.com/signerkit/signerkit/internal/eckey"
	"github.com/signerkit/signerkit/signer"
)

// PKCS#11 3.0 names that github.com/miekg/pkcs11 v1.1.1 does not define
// (its constants stop at v2.40). Values from the PKCS#11 3.0 header
// pkcs11t.h.
const (
	// ckkECEdwards is CKK_EC_EDWARDS, the key type of Ed25519 and Ed448
	// keys.
	ckkECEdwards = 0x00000040
	// ckmECEdwardsKeyPairGen is CKM_EC_EDWARDS_KEY_PAIR_GEN, which
	// generates an Edwards-curve key pair.
	ckmECEdwardsKeyPairGen = 0x00001055
	// ckmEdDSA is CKM_EDDSA, which signs with an Edwards-curve key; with
	// no parameters it is pure Ed25519 (RFC 8032).
	ckmEdDSA = 0x00001057
)

// The curve OIDs of CKA_EC_PARAMS.
var (
	oidEd25519 = asn1.ObjectIdentifier{1, 3, 101, 112}
	oidP256    = asn1.ObjectIdentifier{1, 2, 840, 10045, 3, 1, 7}
	oidP384    = asn1.ObjectIdentifier{1, 3, 132, 0, 34}
)

// ecParams returns the DER CKA_EC_PARAMS for an elliptic-curve algorithm
// (the named curve's OID, which every token takes).
func ecParams(a signer.Algorithm) ([]byte, error) {
	var oid asn1.ObjectIdentifier
	switch a {
	case signer.Ed25519:
		oid = oidEd25519
	case signer.ECDSAP256:
		oid = oidP256
	case signer.ECDSAP384:
		oid = oidP384
	default:
		return nil, fmt.Errorf("pkcs11: no curve for %v: %w", a, signer.ErrUnsupported)
	}
	return asn1.Marshal(oid)
}

// parseECParams returns the algorithm of a CKA_EC_PARAMS value: a named
// curve's OID, or for Edwards keys the PrintableString "edwards25519" that
// PKCS#11 3.0 also allows (and that OpenSC and some HSMs write).
func parseECParams(der []byte) (signer.Algorithm, error) {
	var oid asn1.ObjectIdentifier
	if rest, err := asn1.Unmarshal(der, &oid); err == nil && len(rest) == 0 {
		switch {
		case oid.Equal(oidEd25519):
			return signer.Ed25519, nil
		case oid.Equal(oidP256):
			return signer.ECDSAP256, nil
		case oid.Equal(oidP384):
			return signer.ECDSAP384, nil
		}
		return 0, fmt.Errorf("pkcs11: curve %v: %w", oid, signer.ErrUnsupported)
	}
	var name string
	// encoding/asn1 would take any string type into a string; PKCS#11 3.0
	// says PrintableString.
	if len(der) > 0 && der[0] == asn1.TagPrintableString {
		if rest, err := asn1.Unmarshal(der, &name); err != nil || len(rest) != 0 {
			return 0, fmt.Errorf("pkcs11: malformed CKA_EC_PARAMS curve name: %w", signer.ErrInvalidKey)
		}
		if name == "edwards25519" {
			return signer.Ed25519, nil
		}
		return 0, fmt.Errorf("pkcs11: curve %q: %w", name, signer.ErrUnsupported)
	}
	return 0, fmt.Errorf("pkcs11: CKA_EC_PARAMS is neither an OID nor a curve name: %w", signer.ErrInvalidKey)
}

// parseECPoint decodes CKA_EC_POINT for a key of algorithm a. The value is
// meant to be a DER OCTET STRING around the point, but some tokens store the
// bare point, so both are accepted when unambiguous. Ed25519 keys that are
// of small order or not canonically encoded are refused
// (signer.CheckEd25519PublicKey), ECDSA points off the curve too: both
// wrap signer.ErrInvalidKey.
func parseECPoint(a signer.Algorithm, v []byte) (crypto.PublicKey, error) {
	point := v
	var inner []byte
	if rest, err := asn1.Unmarshal(v, &inner); err == nil && len(rest) == 0 {
		point = inner
	}
	switch a {
	case signer.Ed25519:
		if len(point) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("pkcs11: Ed25519 CKA_EC_POINT of %d bytes: %w", len(point), signer.ErrInvalidKey)
		}
		// A small-order key (the identity point, say) would let one
		// constant signature verify for every message.
		if err := signer.CheckEd25519PublicKey(point); err != nil {
			return nil, fmt.Errorf("pkcs11: Ed25519 CKA_EC_POINT: %w", err)
		}
		return ed25519.PublicKey(bytes.Clone(point)), nil
	case signer.ECDSAP256, signer.ECDSAP384:
		return parseECDSAPoint(a, point)
	}
	return nil, fmt.Errorf("pkcs11: %v has no EC point: %w", a, signer.ErrUnsupported)
}

// parseECDSAPoint decodes an uncompressed SEC 1 point, checking that it is
// on the curve (through ecdsa.ParseUncompressedPublicKey, which refuses
// points that are not).
func parseECDSAPoint(a signer.Algorithm, point []byte) (*ecdsa.PublicKey, error) {
	var curve elliptic.Curve
	switch a {
	case signer.ECDSAP256:
		curve = elliptic.P256()
	case signer.ECDSAP384:
		curve = elliptic.P384()
	default:
		return nil, fmt.Errorf("pkcs11: %v: %w", a, signer.ErrUnsupported)
	}
	k, err := ecdsa.ParseUncompressedPublicKey(curve, point)
	if err != nil {
		return nil, fmt.Errorf("pkcs11: %v CKA_EC_POINT is not a point on the curve: %w", a, signer.ErrInvalidKey)
	}
	return k, nil
}

// marshalECPoint returns CKA_EC_POINT for pub: a DER OCTET STRING around
// the Ed25519 key or the uncompressed SEC 1 point.
func marshalECPoint(pub crypto.PublicKey) ([]byte, error) {
	var point []byte
	switch k := pub.(type) {
	case ed25519.PublicKey:
		point = k
	case *ecdsa.PublicKey:
		e, err := k.ECDH()
		if err != nil {
			return nil, fmt.Errorf("pkcs11: %w", signer.ErrInvalidKey)
		}
		point = e.Bytes()
	default:
		return nil, fmt.Errorf("pkcs11: no EC point for %T: %w", pub, signer.ErrUnsupported)
	}
	return asn1.Marshal(point)
}

// rawToASN1 converts the r‖s signature that CKM_ECDSA returns to the ASN.1
// DER form crypto.Signer returns, checking its length for the curve.
func rawToASN1(a signer.Algorithm, raw []byte) ([]byte, error) {
	if err := checkRaw(a, raw); err != nil {
		return nil, err
	}
	der, err := signer.ECDSAToASN1(a, raw)
	if err != nil {
		return nil, fmt.Errorf("pkcs11: token returned a malformed %v signature: %w", a, signer.ErrProtocol)
	}
	return der, nil
}

// checkRaw checks the length of an r‖s signature from the token.
func checkRaw(a signer.Algorithm, raw []byte) error {
	size := (a.Curve().Params().BitSize + 7) / 8
	if len(raw) != 2*size {
		return fmt.Errorf("pkcs11: token returned a %d-byte %v signature, want %d: %w", len(raw), a, 2*size, signer.ErrProtocol)
	}
	return nil
}

// Digest algorithm OIDs for the DigestInfo that CKM_RSA_PKCS signs
// (RFC 8017 §9.2, NIST CSOR).
var digestOIDs = map[crypto.Hash]asn1.ObjectIdentifier{
	crypto.SHA224:     {2, 16, 840, 1, 101, 3, 4, 2, 4},
	crypto.SHA256:     {2, 16, 840, 1, 101, 3, 4, 2, 1},
	crypto.SHA384:     {2, 16, 840, 1, 101, 3, 4, 2, 2},
	crypto.SHA512:     {2, 16, 840, 1, 101, 3, 4, 2, 3},
	crypto.SHA512_256: {2, 16, 840, 1, 101, 3, 4, 2, 6},
	crypto.SHA3_256:   {2, 16, 840, 1, 101, 3, 4, 2, 8},
	crypto.SHA3_384:   {2, 16, 840, 1, 101, 3, 4, 2, 9},
	crypto.SHA3_512:   {2, 16, 840, 1, 101, 3, 4, 2, 10},
}

type algorithmIdentifier struct {
	Algorithm  asn1.ObjectIdentifier
	Parameters asn1.RawValue
}

type digestInfo struct {
	Algorithm algorithmIdentifier
	Digest    []byte
}

// digestInfoFor wraps digest in the DER DigestInfo for h, which is what
// CKM_RSA_PKCS pads and signs for an RSASSA-PKCS1-v1_5 signature.
func digestInfoFor(h crypto.Hash, digest []byte) ([]byte, error) {
	oid, ok := digestOIDs[h]
	if !ok {
		return nil, fmt.Errorf("pkcs11: RSA PKCS #1 v1.5 with %v: %w", h, signer.ErrUnsupported)
	}
	return asn1.Marshal(digestInfo{
		Algorithm: algorithmIdentifier{Algorithm: oid, Parameters: asn1.NullRawValue},
		Digest:    digest,
	})
}

// maxRSABits is the largest RSA modulus read from a token: this package
// makes and imports keys of 2048 to 4096 bits, and a larger CKA_MODULUS
// (a corrupt or hostile token's) would only make every sign allocate and
// verify more.
const maxRSABits = 16384

// rsaPublic decodes an RSA key's CKA_MODULUS and CKA_PUBLIC_EXPONENT
// (big-endian, leading zeros allowed). It refuses with an error wrapping
// signer.ErrUnsupported a modulus of fewer than 2048 or more than 16384
// bits, and with one wrapping signer.ErrInvalidKey an even modulus or an
// exponent that is even, below 3 or above 2³¹−1.
func rsaPublic(n, e []byte) (*rsa.PublicKey, error) {
	N := new(big.Int).SetBytes(n)
	E := new(big.Int).SetBytes(e)
	if b := N.BitLen(); b < 2048 || b > maxRSABits {
		return nil, fmt.Errorf("pkcs11: %d-bit RSA key: 2048 to %d bits: %w", b, maxRSABits, signer.ErrUnsupported)
	}
	if N.Bit(0) == 0 {
		return nil, fmt.Errorf("pkcs11: RSA modulus is even: %w", signer.ErrInvalidKey)
	}
	if !E.IsInt64() || E.Int64() < 3 || E.Int64() > 1<<31-1 || E.Bit(0) == 0 {
		return nil, fmt.Errorf("pkcs11: RSA public exponent out of range: %w", signer.ErrInvalidKey)
	}
	return &rsa.PublicKey{N: N, E: int(E.Int64())}, nil
}

// copyPublic returns a deep copy of a public key this package reads, so
// that a caller who changes it changes nothing of the Signer's.
func copyPublic(pub crypto.PublicKey) crypto.PublicKey {
	switch k := pub.(type) {
	case ed25519.PublicKey:
		return ed25519.PublicKey(bytes.Clone(k))
	case *ecdsa.PublicKey:
		return eckey.Clone(k)
	case *rsa.PublicKey:
		return &rsa.PublicKey{N: new(big.Int).Set(k.N), E: k.E}
	}
	return pub
}
