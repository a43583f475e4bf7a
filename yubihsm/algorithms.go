package yubihsm

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/subtle"
	"fmt"
	"math/big"

	"github.com/certusone/yubihsm-go/commands"
	"github.com/decred/dcrd/dcrec/secp256k1/v4"

	"github.com/signerkit/signerkit/internal/eckey"
	"github.com/signerkit/signerkit/internal/secp256k1sign"
	"github.com/signerkit/signerkit/signer"
)

// The device's algorithms and capabilities for each signer.Algorithm, its
// public keys, and the key material Put Asymmetric Key takes.

// DefaultRSABits is the modulus size of the RSA keys GenerateKey makes.
const DefaultRSABits = 2048

// deviceAlgorithm maps a signer algorithm to the device's key algorithm
// (RSA keys at DefaultRSABits) and the capabilities a new key of it gets:
// the one sign capability, and for signer.RSAPKCS1v15 PSS too (a key made
// for PSS signs PSS only, which is how the key says what it is for).
func deviceAlgorithm(a signer.Algorithm) (commands.Algorithm, uint64, error) {
	switch a {
	case signer.Ed25519:
		return commands.AlgorithmED25519, commands.CapabilityAsymmetricSignEddsa, nil
	case signer.ECDSAP256:
		return commands.AlgorithmP256, commands.CapabilityAsymmetricSignEcdsa, nil
	case signer.ECDSAP384:
		return commands.AlgorithmP384, commands.CapabilityAsymmetricSignEcdsa, nil
	case signer.ECDSASecp256k1:
		return commands.AlgorithmSecp256k1, commands.CapabilityAsymmetricSignEcdsa, nil
	case signer.RSAPKCS1v15:
		return rsaDeviceAlgorithm(DefaultRSABits), commands.CapabilityAsymmetricSignPkcs | commands.CapabilityAsymmetricSignPss, nil
	case signer.RSAPSS:
		return rsaDeviceAlgorithm(DefaultRSABits), commands.CapabilityAsymmetricSignPss, nil
	}
	return 0, 0, fmt.Errorf("yubihsm: %v keys: %w", a, signer.ErrUnsupported)
}

// rsaDeviceAlgorithm is the device's algorithm of an RSA key of bits.
func rsaDeviceAlgorithm(bits int) commands.Algorithm {
	switch bits {
	case 3072:
		return commands.AlgorithmRSA3072
	case 4096:
		return commands.AlgorithmRSA4096
	}
	return commands.AlgorithmRSA2048
}

// deviceRSABits is the modulus size of the device's RSA key algorithm a,
// 0 for the others.
func deviceRSABits(a commands.Algorithm) int {
	switch a {
	case commands.AlgorithmRSA2048:
		return 2048
	case commands.AlgorithmRSA3072:
		return 3072
	case commands.AlgorithmRSA4096:
		return 4096
	}
	return 0
}

// signerAlgorithm maps a key's device algorithm and capabilities to the
// signer algorithm it signs with: an RSA key that may sign PSS but not
// PKCS #1 v1.5 is signer.RSAPSS, any other RSA key signer.RSAPKCS1v15.
func signerAlgorithm(a commands.Algorithm, caps uint64) (signer.Algorithm, bool) {
	switch a {
	case commands.AlgorithmED25519:
		return signer.Ed25519, true
	case commands.AlgorithmP256:
		return signer.ECDSAP256, true
	case commands.AlgorithmP384:
		return signer.ECDSAP384, true
	case commands.AlgorithmSecp256k1:
		return signer.ECDSASecp256k1, true
	}
	if deviceRSABits(a) == 0 {
		return 0, false
	}
	if caps&commands.CapabilityAsymmetricSignPss != 0 && caps&commands.CapabilityAsymmetricSignPkcs == 0 {
		return signer.RSAPSS, true
	}
	return signer.RSAPKCS1v15, true
}

// parsePublic decodes a Get Public Key response: an Ed25519 key, an EC
// point as X ‖ Y, or an RSA modulus (the device's exponent is 65537).
func parsePublic(pk *commands.GetPubKeyResponse) (crypto.PublicKey, error) {
	switch pk.Algorithm {
	case commands.AlgorithmED25519:
		if len(pk.KeyData) != ed25519.PublicKeySize {
			return nil, &protocolError{fmt.Sprintf("Ed25519 public key of %d bytes", len(pk.KeyData))}
		}
		// A small-order key (the identity point, say) lets one constant
		// signature verify for every message, and a non-canonical one
		// verifies differently from library to library: no key the device
		// derived from a seed is either, so the device (or what answers at
		// the connector URL) is lying.
		if err := signer.CheckEd25519PublicKey(pk.KeyData); err != nil {
			return nil, fmt.Errorf("yubihsm: the device's Ed25519 public key: %w", err)
		}
		return ed25519.PublicKey(append([]byte(nil), pk.KeyData...)), nil
	case commands.AlgorithmP256, commands.AlgorithmP384:
		curve, alg := elliptic.P256(), signer.ECDSAP256
		if pk.Algorithm == commands.AlgorithmP384 {
			curve, alg = elliptic.P384(), signer.ECDSAP384
		}
		k, err := ecdsa.ParseUncompressedPublicKey(curve, append([]byte{4}, pk.KeyData...))
		if err != nil || alg.CheckKey(k) != nil {
			return nil, &protocolError{fmt.Sprintf("%v public key of %d bytes not on the curve", alg, len(pk.KeyData))}
		}
		return k, nil
	case commands.AlgorithmSecp256k1:
		if len(pk.KeyData) != 64 {
			return nil, &protocolError{fmt.Sprintf("secp256k1 public key of %d bytes", len(pk.KeyData))}
		}
		k, err := signer.ParseSecp256k1PublicKey(append([]byte{4}, pk.KeyData...))
		if err != nil {
			return nil, &protocolError{"secp256k1 public key not on the curve"}
		}
		return k, nil
	}
	if bits := deviceRSABits(pk.Algorithm); bits != 0 {
		n := new(big.Int).SetBytes(pk.KeyData)
		if len(pk.KeyData) != bits/8 || n.BitLen() != bits || n.Bit(0) == 0 {
			return nil, &protocolError{fmt.Sprintf("RSA-%d modulus of %d bytes, %d bits", bits, len(pk.KeyData), n.BitLen())}
		}
		return &rsa.PublicKey{N: n, E: 65537}, nil
	}
	return nil, fmt.Errorf("yubihsm: public key of device algorithm %d: %w", pk.Algorithm, signer.ErrUnsupported)
}

// rsaBits is the modulus size of an RSA public key, 0 for other keys.
func rsaBits(pub crypto.PublicKey) int {
	if k, ok := pub.(*rsa.PublicKey); ok {
		return k.N.BitLen()
	}
	return 0
}

// importSecret returns the key material Put Asymmetric Key takes for
// priv (a copy the caller wipes), its public key, and the algorithm it
// signs with by default.
func importSecret(priv crypto.PrivateKey) ([]byte, crypto.PublicKey, signer.Algorithm, error) {
	switch k := priv.(type) {
	case ed25519.PrivateKey:
		if len(k) != ed25519.PrivateKeySize {
			return nil, nil, 0, fmt.Errorf("yubihsm: Ed25519 key of %d bytes: %w", len(k), signer.ErrInvalidKey)
		}
		secret := append([]byte(nil), k.Seed()...)
		if !ed25519SeedMatches(secret, k[ed25519.SeedSize:]) {
			clear(secret)
			return nil, nil, 0, fmt.Errorf("yubihsm: the Ed25519 key's public half is not its seed's: %w", signer.ErrInvalidKey)
		}
		return secret, k.Public(), signer.Ed25519, nil
	case *ecdsa.PrivateKey:
		return ecdsaSecret(k)
	case *secp256k1.PrivateKey:
		if k == nil {
			return nil, nil, 0, fmt.Errorf("yubihsm: a nil secp256k1 key: %w", signer.ErrInvalidKey)
		}
		b := k.Key.Bytes()
		defer clear(b[:])
		if k.Key.IsZero() {
			return nil, nil, 0, fmt.Errorf("yubihsm: a zero secp256k1 key: %w", signer.ErrInvalidKey)
		}
		return append([]byte(nil), b[:]...), k.PubKey().ToECDSA(), signer.ECDSASecp256k1, nil
	case *rsa.PrivateKey:
		return rsaSecret(k)
	}
	return nil, nil, 0, fmt.Errorf("yubihsm: cannot import %T: %w", priv, signer.ErrUnsupported)
}

// ecdsaSecret is importSecret for an ECDSA key on P-256, P-384 or
// secp256k1: its scalar, checked against its public key.
func ecdsaSecret(k *ecdsa.PrivateKey) ([]byte, crypto.PublicKey, signer.Algorithm, error) {
	if k == nil || k.Curve == nil {
		return nil, nil, 0, fmt.Errorf("yubihsm: an ECDSA key with no curve: %w", signer.ErrInvalidKey)
	}
	var alg signer.Algorithm
	switch {
	case k.Curve == elliptic.P256():
		alg = signer.ECDSAP256
	case k.Curve == elliptic.P384():
		alg = signer.ECDSAP384
	case k.Curve.Params().Name == "secp256k1":
		alg = signer.ECDSASecp256k1
	default:
		return nil, nil, 0, fmt.Errorf("yubihsm: ECDSA keys on %s: %w", k.Curve.Params().Name, signer.ErrUnsupported)
	}
	if err := alg.CheckKey(&k.PublicKey); err != nil {
		return nil, nil, 0, fmt.Errorf("yubihsm: the %v key's public point: %v: %w", alg, err, signer.ErrInvalidKey)
	}
	size := (k.Curve.Params().N.BitLen() + 7) / 8
	d := eckey.Scalar(k)
	if d == nil || d.Sign() <= 0 || d.Cmp(k.Curve.Params().N) >= 0 {
		return nil, nil, 0, fmt.Errorf("yubihsm: want a %v key with a scalar in range: %w", alg, signer.ErrInvalidKey)
	}
	// Not k.Bytes(): that is crypto/ecdsa's cached copy, not ours to wipe.
	secret := d.FillBytes(make([]byte, size))
	if !scalarMatches(alg, secret, &k.PublicKey) {
		clear(secret)
		return nil, nil, 0, fmt.Errorf("yubihsm: the %v key's public key is not its scalar's: %w", alg, signer.ErrInvalidKey)
	}
	return secret, &k.PublicKey, alg, nil
}

// scalarMatches reports whether pub is the public key of the scalar d
// (big-endian) on alg's curve.
func scalarMatches(alg signer.Algorithm, d []byte, pub *ecdsa.PublicKey) bool {
	x, y := eckey.Coordinates(pub)
	if x == nil || y == nil {
		return false
	}
	size := len(d)
	want := make([]byte, 1+2*size)
	want[0] = 4
	x.FillBytes(want[1 : 1+size])
	y.FillBytes(want[1+size:])
	var got []byte
	if alg == signer.ECDSASecp256k1 {
		k, ok := secp256k1sign.FromScalar(d)
		if !ok {
			return false
		}
		got = k.PubKey().SerializeUncompressed()
		k.Zero()
	} else {
		k, err := ecdsa.ParseRawPrivateKey(pub.Curve, d)
		if err != nil {
			return false
		}
		got, _ = k.PublicKey.Bytes()
	}
	return subtle.ConstantTimeCompare(got, want) == 1
}

// rsaSecret is importSecret for an RSA key: p ‖ q, half the modulus size
// each, for a key of 2048, 3072 or 4096 bits with two primes and the
// exponent 65537, the one the device uses.
func rsaSecret(k *rsa.PrivateKey) ([]byte, crypto.PublicKey, signer.Algorithm, error) {
	if k == nil || k.N == nil {
		return nil, nil, 0, fmt.Errorf("yubihsm: an RSA key with no modulus: %w", signer.ErrInvalidKey)
	}
	bits := k.N.BitLen()
	if bits != 2048 && bits != 3072 && bits != 4096 {
		return nil, nil, 0, fmt.Errorf("yubihsm: %d-bit RSA key; the device takes 2048, 3072 or 4096: %w", bits, signer.ErrUnsupported)
	}
	if len(k.Primes) != 2 || k.E != 65537 {
		return nil, nil, 0, fmt.Errorf("yubihsm: RSA key with %d primes and exponent %d; the device takes two primes and 65537: %w", len(k.Primes), k.E, signer.ErrUnsupported)
	}
	if err := k.Validate(); err != nil {
		return nil, nil, 0, fmt.Errorf("yubihsm: RSA key: %v: %w", err, signer.ErrInvalidKey)
	}
	half := bits / 16
	p, q := k.Primes[0], k.Primes[1]
	if p.BitLen() > 8*half || q.BitLen() > 8*half {
		return nil, nil, 0, fmt.Errorf("yubihsm: RSA key with unbalanced primes: %w", signer.ErrUnsupported)
	}
	secret := make([]byte, 2*half)
	p.FillBytes(secret[:half])
	q.FillBytes(secret[half:])
	return secret, &k.PublicKey, signer.RSAPKCS1v15, nil
}
