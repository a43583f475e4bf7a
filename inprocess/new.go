package inprocess

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"math/big"
	"runtime"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"

	"github.com/signerkit/signerkit/internal/eckey"
	"github.com/signerkit/signerkit/internal/ed25519sign"
	"github.com/signerkit/signerkit/internal/secp256k1sign"
	"github.com/signerkit/signerkit/signer"
)

// DefaultRSABits is the modulus size Generate uses for RSA keys.
const DefaultRSABits = 2048

// Generate makes a new key for alg from crypto/rand, RSA keys with
// DefaultRSABits.
func Generate(alg signer.Algorithm) (*Signer, error) {
	switch alg {
	case signer.Ed25519:
		// Not ed25519.GenerateKey, which leaves its seed buffer and an
		// expanded key behind unwiped.
		seed := make([]byte, ed25519.SeedSize)
		defer clear(seed)
		if _, err := rand.Read(seed); err != nil {
			return nil, fmt.Errorf("inprocess: %w", err)
		}
		return newEd25519(seed)
	case signer.ECDSAP256, signer.ECDSAP384:
		priv, err := ecdsa.GenerateKey(alg.Curve(), rand.Reader)
		if err != nil {
			return nil, fmt.Errorf("inprocess: %w", err)
		}
		return &Signer{alg: alg, pub: copyPublic(&priv.PublicKey), ec: priv}, nil
	case signer.ECDSASecp256k1:
		priv, err := secp256k1.GeneratePrivateKey()
		if err != nil {
			return nil, fmt.Errorf("inprocess: %w", err)
		}
		return newSecp256k1(priv), nil
	case signer.RSAPKCS1v15, signer.RSAPSS:
		return GenerateRSA(alg, DefaultRSABits)
	}
	return nil, fmt.Errorf("inprocess: cannot generate a %v key: %w", alg, signer.ErrUnsupported)
}

// GenerateRSA makes a new RSA key of the given modulus size (2048 to 8192
// bits) whose SignContext uses alg, RSAPKCS1v15 or RSAPSS.
func GenerateRSA(alg signer.Algorithm, bits int) (*Signer, error) {
	if !alg.IsRSA() {
		return nil, fmt.Errorf("inprocess: %v is not an RSA algorithm: %w", alg, signer.ErrUnsupported)
	}
	if bits < 2048 || bits > 8192 {
		return nil, fmt.Errorf("inprocess: RSA modulus of %d bits, want 2048 to 8192: %w", bits, signer.ErrUnsupported)
	}
	priv, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		return nil, fmt.Errorf("inprocess: %w", err)
	}
	return &Signer{alg: alg, pub: copyPublic(&priv.PublicKey), rsa: priv}, nil
}

// FromSeed makes the key for alg determined by seed: for Ed25519 the
// 32-byte RFC 8032 private key (as ed25519.NewKeyFromSeed reads it); for the ECDSA
// algorithms the private scalar, big-endian, as long as the curve's order
// (32 bytes for P-256 and secp256k1, 48 for P-384), in [1, n−1]. RSA keys
// have no seed. FromSeed does not keep seed.
func FromSeed(seed []byte, alg signer.Algorithm) (*Signer, error) {
	switch alg {
	case signer.Ed25519:
		if len(seed) != ed25519.SeedSize {
			return nil, fmt.Errorf("inprocess: Ed25519 seed is %d bytes, want %d: %w", len(seed), ed25519.SeedSize, signer.ErrInvalidKey)
		}
		return newEd25519(seed)
	case signer.ECDSAP256, signer.ECDSAP384:
		priv, err := ecdsa.ParseRawPrivateKey(alg.Curve(), seed) // checks length and range
		if err != nil {
			return nil, fmt.Errorf("inprocess: %v private scalar is not %d bytes in [1, n-1]: %w", alg, alg.Curve().Params().BitSize/8, signer.ErrInvalidKey)
		}
		return &Signer{alg: alg, pub: copyPublic(&priv.PublicKey), ec: priv}, nil
	case signer.ECDSASecp256k1:
		k, ok := secp256k1sign.FromScalar(seed)
		if !ok {
			return nil, fmt.Errorf("inprocess: secp256k1 private scalar is not 32 bytes in [1, n-1]: %w", signer.ErrInvalidKey)
		}
		return newSecp256k1(k), nil
	}
	return nil, fmt.Errorf("inprocess: no seed form for %v keys: %w", alg, signer.ErrUnsupported)
}

// FromPrivateKey wraps a copy of an existing private key:
// ed25519.PrivateKey, *ecdsa.PrivateKey on P-256, P-384 or secp256k1
// (signer.Secp256k1), or *rsa.PrivateKey of 2048 to 8192 bits. alg may be
// 0 except for RSA keys, where it picks RSAPKCS1v15 or RSAPSS. The key is
// checked first — its public half derived from its private half, an ECDSA
// scalar in range, an RSA key that validates — and refused with an error
// wrapping signer.ErrInvalidKey otherwise; an Ed25519 key's public half
// must moreover be a canonical encoding of a point not of small order
// (signer.CheckEd25519PublicKey). Close wipes the copy, never the caller's
// key.
func FromPrivateKey(priv crypto.PrivateKey, alg signer.Algorithm) (*Signer, error) {
	switch k := priv.(type) {
	case ed25519.PrivateKey:
		return fromEd25519(k, alg)
	case *ecdsa.PrivateKey:
		return fromECDSA(k, alg)
	case *rsa.PrivateKey:
		return fromRSA(k, alg)
	}
	return nil, fmt.Errorf("inprocess: %T is not a private key this package takes: %w", priv, signer.ErrUnsupported)
}

func fromEd25519(k ed25519.PrivateKey, alg signer.Algorithm) (*Signer, error) {
	if alg != 0 && alg != signer.Ed25519 {
		return nil, fmt.Errorf("inprocess: an Ed25519 key cannot sign %v: %w", alg, signer.ErrUnsupported)
	}
	if len(k) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("inprocess: Ed25519 private key is %d bytes, want %d: %w", len(k), ed25519.PrivateKeySize, signer.ErrInvalidKey)
	}
	if err := signer.CheckEd25519PublicKey(k[ed25519.SeedSize:]); err != nil {
		return nil, fmt.Errorf("inprocess: %w", err)
	}
	return newEd25519(k)
}

func fromECDSA(k *ecdsa.PrivateKey, alg signer.Algorithm) (*Signer, error) {
	var x, y *big.Int
	if k != nil {
		x, y = eckey.Coordinates(&k.PublicKey)
	}
	if k == nil || eckey.Scalar(k) == nil || k.Curve == nil || x == nil || y == nil {
		return nil, fmt.Errorf("inprocess: incomplete ECDSA private key: %w", signer.ErrInvalidKey)
	}
	if p := k.Curve.Params().P; x.Sign() < 0 || y.Sign() < 0 || x.Cmp(p) >= 0 || y.Cmp(p) >= 0 {
		return nil, fmt.Errorf("inprocess: ECDSA public key coordinates out of range: %w", signer.ErrInvalidKey)
	}
	if alg == 0 {
		a, err := signer.AlgorithmOf(k)
		if err != nil {
			return nil, fmt.Errorf("inprocess: %w", err)
		}
		alg = a
	}
	if err := alg.CheckKey(&k.PublicKey); err != nil {
		return nil, fmt.Errorf("inprocess: %w", err)
	}
	// Rebuild the key from its scalar, which checks the scalar's range
	// and makes the copy, then make sure it is the key pair the caller
	// meant.
	size := (k.Curve.Params().BitSize + 7) / 8
	if kd := eckey.Scalar(k); kd.Sign() <= 0 || kd.BitLen() > 8*size {
		return nil, fmt.Errorf("inprocess: %v private scalar out of range: %w", alg, signer.ErrInvalidKey)
	}
	d := eckey.Scalar(k).FillBytes(make([]byte, size))
	key, err := FromSeed(d, alg)
	clear(d)
	if err != nil {
		return nil, err
	}
	if !k.PublicKey.Equal(key.pub) {
		key.Close()
		return nil, fmt.Errorf("inprocess: %v private key does not match its public key: %w", alg, signer.ErrInvalidKey)
	}
	return key, nil
}

func fromRSA(k *rsa.PrivateKey, alg signer.Algorithm) (*Signer, error) {
	if !alg.IsRSA() {
		return nil, fmt.Errorf("inprocess: an RSA key needs alg RSAPKCS1v15 or RSAPSS, not %v: %w", alg, signer.ErrUnsupported)
	}
	if k == nil || k.N == nil || k.D == nil || len(k.Primes) < 2 {
		return nil, fmt.Errorf("inprocess: incomplete RSA private key: %w", signer.ErrInvalidKey)
	}
	if bits := k.N.BitLen(); bits < 2048 || bits > 8192 {
		return nil, fmt.Errorf("inprocess: RSA modulus of %d bits, want 2048 to 8192: %w", bits, signer.ErrUnsupported)
	}
	if err := k.Validate(); err != nil {
		return nil, fmt.Errorf("inprocess: invalid RSA key: %w", signer.ErrInvalidKey)
	}
	c := &rsa.PrivateKey{
		PublicKey: rsa.PublicKey{N: new(big.Int).Set(k.N), E: k.E},
		D:         new(big.Int).Set(k.D),
	}
	for _, p := range k.Primes {
		c.Primes = append(c.Primes, new(big.Int).Set(p))
	}
	c.Precompute()
	return &Signer{alg: alg, pub: copyPublic(&c.PublicKey), rsa: c}, nil
}

// newEd25519 makes a Signer of an Ed25519 key, expanded by ed25519sign
// into memory of its own (locked, out of core dumps, where the system
// allows; see internal/hardening). key is the 32-byte seed, or
// crypto/ed25519's seed‖public key, whose public half must be the one the
// seed gives; the callers checked its length. The derived public key is
// checked with signer.CheckEd25519PublicKey too, though a seed cannot give
// a small-order one.
func newEd25519(key []byte) (*Signer, error) {
	k, free := ed25519sign.NewLocked()
	if len(key) == ed25519.SeedSize {
		k.SetSeed(key) // cannot fail: 32 bytes
	} else if err := k.SetPrivateKey(key); err != nil {
		free()
		return nil, fmt.Errorf("inprocess: Ed25519 public key is not the one its seed gives: %w", signer.ErrInvalidKey)
	}
	pub := ed25519.PublicKey(k.Public())
	if err := signer.CheckEd25519PublicKey(pub); err != nil {
		free()
		return nil, fmt.Errorf("inprocess: %w", err)
	}
	s := &Signer{alg: signer.Ed25519, pub: pub, ed: k, edFree: free}
	// A Signer dropped without Close still gets its key wiped and its
	// memory, which is outside the Go heap, released.
	runtime.AddCleanup(s, func(free func()) { free() }, free)
	return s, nil
}

func newSecp256k1(priv *secp256k1.PrivateKey) *Signer {
	return &Signer{alg: signer.ECDSASecp256k1, pub: priv.PubKey().ToECDSA(), k1: priv}
}

// ownEd25519 returns a copy of priv, an Ed25519 key as seed‖public key,
// after checking that its public half is the one its seed gives and
// passes signer.CheckEd25519PublicKey. The check expands the key with
// ed25519sign, which leaves no copy behind as ed25519.NewKeyFromSeed
// would.
func ownEd25519(priv []byte) (ed25519.PrivateKey, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("inprocess: Ed25519 private key is %d bytes, want %d: %w", len(priv), ed25519.PrivateKeySize, signer.ErrInvalidKey)
	}
	if err := signer.CheckEd25519PublicKey(priv[ed25519.SeedSize:]); err != nil {
		return nil, fmt.Errorf("inprocess: %w", err)
	}
	if err := ed25519sign.CheckPrivateKey(priv); err != nil {
		return nil, fmt.Errorf("inprocess: Ed25519 public key is not the one its seed gives: %w", signer.ErrInvalidKey)
	}
	return append(make(ed25519.PrivateKey, 0, ed25519.PrivateKeySize), priv...), nil
}

// ed25519FromSeed returns the Ed25519 key of seed as seed‖public key,
// expanded by ed25519sign.NewKeyFromSeed, which leaves no copy behind.
func ed25519FromSeed(seed []byte) (ed25519.PrivateKey, error) {
	k, err := ed25519sign.NewKeyFromSeed(seed)
	if err != nil {
		return nil, fmt.Errorf("inprocess: Ed25519 seed is %d bytes, want %d: %w", len(seed), ed25519.SeedSize, signer.ErrInvalidKey)
	}
	if err := signer.CheckEd25519PublicKey(k[ed25519.SeedSize:]); err != nil { // cannot fail for a seed's key
		clear(k)
		return nil, fmt.Errorf("inprocess: %w", err)
	}
	return k, nil
}
