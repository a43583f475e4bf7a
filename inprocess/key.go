package inprocess

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"io"
	"math/big"
	"sync"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	k1ecdsa "github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"

	"github.com/signerkit/signerkit/signer"
)

// Key is a private key held in process memory. It is safe for concurrent
// use: any number of signs run in parallel, and Close waits for those in
// flight before it wipes the key.
type Key struct {
	alg signer.Algorithm
	pub crypto.PublicKey

	mu     sync.RWMutex // held for reading by signs, for writing by Close
	closed bool
	ed     ed25519.PrivateKey    // Ed25519, owned: wiped on Close
	k1     *secp256k1.PrivateKey // ECDSASecp256k1, owned: zeroed on Close
	ec     *ecdsa.PrivateKey     // ECDSAP256, ECDSAP384
	rsa    *rsa.PrivateKey       // RSAPKCS1v15, RSAPSS
}

var _ signer.AlgorithmSigner = (*Key)(nil)

// DefaultRSABits is the modulus size Generate uses for RSA keys.
const DefaultRSABits = 2048

// Generate makes a new key for alg from crypto/rand, RSA keys with
// DefaultRSABits.
func Generate(alg signer.Algorithm) (*Key, error) {
	switch alg {
	case signer.Ed25519:
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, fmt.Errorf("inprocess: %w", err)
		}
		return newEd25519(alg, priv), nil
	case signer.ECDSAP256, signer.ECDSAP384:
		priv, err := ecdsa.GenerateKey(alg.Curve(), rand.Reader)
		if err != nil {
			return nil, fmt.Errorf("inprocess: %w", err)
		}
		return &Key{alg: alg, pub: copyPublic(&priv.PublicKey), ec: priv}, nil
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
func GenerateRSA(alg signer.Algorithm, bits int) (*Key, error) {
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
	return &Key{alg: alg, pub: copyPublic(&priv.PublicKey), rsa: priv}, nil
}

// FromSeed makes the key for alg determined by seed: for Ed25519 the
// 32-byte RFC 8032 private key (ed25519.NewKeyFromSeed); for the ECDSA
// algorithms the private scalar, big-endian, as long as the curve's order
// (32 bytes for P-256 and secp256k1, 48 for P-384), in [1, n−1]. RSA keys
// have no seed. FromSeed does not keep seed.
func FromSeed(alg signer.Algorithm, seed []byte) (*Key, error) {
	switch alg {
	case signer.Ed25519:
		if len(seed) != ed25519.SeedSize {
			return nil, fmt.Errorf("inprocess: Ed25519 seed is %d bytes, want %d: %w", len(seed), ed25519.SeedSize, signer.ErrInvalidKey)
		}
		return newEd25519(alg, ed25519.NewKeyFromSeed(seed)), nil
	case signer.ECDSAP256, signer.ECDSAP384:
		c := ecdh.P256()
		if alg == signer.ECDSAP384 {
			c = ecdh.P384()
		}
		k, err := c.NewPrivateKey(seed) // checks length and range
		if err != nil {
			return nil, fmt.Errorf("inprocess: %v private scalar is not %d bytes in [1, n-1]: %w", alg, alg.Curve().Params().BitSize/8, signer.ErrInvalidKey)
		}
		point := k.PublicKey().Bytes() // 0x04 ‖ X ‖ Y
		size := (len(point) - 1) / 2
		priv := &ecdsa.PrivateKey{
			PublicKey: ecdsa.PublicKey{
				Curve: alg.Curve(),
				X:     new(big.Int).SetBytes(point[1 : 1+size]),
				Y:     new(big.Int).SetBytes(point[1+size:]),
			},
			D: new(big.Int).SetBytes(seed),
		}
		return &Key{alg: alg, pub: copyPublic(&priv.PublicKey), ec: priv}, nil
	case signer.ECDSASecp256k1:
		var d secp256k1.ModNScalar
		if len(seed) != 32 || d.SetByteSlice(seed) || d.IsZero() {
			return nil, fmt.Errorf("inprocess: secp256k1 private scalar is not 32 bytes in [1, n-1]: %w", signer.ErrInvalidKey)
		}
		return newSecp256k1(secp256k1.NewPrivateKey(&d)), nil
	}
	return nil, fmt.Errorf("inprocess: no seed form for %v keys: %w", alg, signer.ErrUnsupported)
}

// FromPrivateKey wraps a copy of an existing private key:
// ed25519.PrivateKey, *ecdsa.PrivateKey on P-256, P-384 or secp256k1
// (signer.Secp256k1), or *rsa.PrivateKey of 2048 to 8192 bits. alg may be
// 0 except for RSA keys, where it picks RSAPKCS1v15 or RSAPSS. The key is
// checked first — its public half derived from its private half, an ECDSA
// scalar in range, an RSA key that validates — and refused with an error
// wrapping signer.ErrInvalidKey otherwise. Close wipes the copy, never the
// caller's key.
func FromPrivateKey(priv crypto.PrivateKey, alg signer.Algorithm) (*Key, error) {
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

func fromEd25519(k ed25519.PrivateKey, alg signer.Algorithm) (*Key, error) {
	if alg != 0 && alg != signer.Ed25519 {
		return nil, fmt.Errorf("inprocess: an Ed25519 key cannot sign %v: %w", alg, signer.ErrUnsupported)
	}
	if len(k) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("inprocess: Ed25519 private key is %d bytes, want %d: %w", len(k), ed25519.PrivateKeySize, signer.ErrInvalidKey)
	}
	own := ed25519.NewKeyFromSeed(k.Seed())
	if !bytes.Equal(own, k) {
		clear(own)
		return nil, fmt.Errorf("inprocess: Ed25519 public key is not the one its seed gives: %w", signer.ErrInvalidKey)
	}
	return newEd25519(signer.Ed25519, own), nil
}

func fromECDSA(k *ecdsa.PrivateKey, alg signer.Algorithm) (*Key, error) {
	if k == nil || k.D == nil || k.Curve == nil || k.X == nil || k.Y == nil {
		return nil, fmt.Errorf("inprocess: incomplete ECDSA private key: %w", signer.ErrInvalidKey)
	}
	if p := k.Curve.Params().P; k.X.Sign() < 0 || k.Y.Sign() < 0 || k.X.Cmp(p) >= 0 || k.Y.Cmp(p) >= 0 {
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
	if k.D.Sign() <= 0 || k.D.BitLen() > 8*size {
		return nil, fmt.Errorf("inprocess: %v private scalar out of range: %w", alg, signer.ErrInvalidKey)
	}
	d := k.D.FillBytes(make([]byte, size))
	key, err := FromSeed(alg, d)
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

func fromRSA(k *rsa.PrivateKey, alg signer.Algorithm) (*Key, error) {
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
	return &Key{alg: alg, pub: copyPublic(&c.PublicKey), rsa: c}, nil
}

func newEd25519(alg signer.Algorithm, priv ed25519.PrivateKey) *Key {
	return &Key{alg: alg, pub: priv.Public(), ed: priv}
}

func newSecp256k1(priv *secp256k1.PrivateKey) *Key {
	return &Key{alg: signer.ECDSASecp256k1, pub: priv.PubKey().ToECDSA(), k1: priv}
}

// Algorithm returns the algorithm SignContext uses.
func (k *Key) Algorithm() signer.Algorithm { return k.alg }

// Public returns the public key: ed25519.PublicKey, *ecdsa.PublicKey or
// *rsa.PublicKey, held apart from the private key. It works after Close.
func (k *Key) Public() crypto.PublicKey { return k.pub }

// Close wipes the key: Ed25519 and secp256k1 keys completely; for P-256,
// P-384 and RSA keys, the words of the math/big private values, while the
// copies that crypto/ecdsa and crypto/rsa keep for themselves (RSA's
// precomputed key, ECDSA's key cache) are out of reach and are only
// dropped. It waits for signs in flight and is idempotent.
func (k *Key) Close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return nil
	}
	k.closed = true
	clear(k.ed)
	k.ed = nil
	if k.k1 != nil {
		k.k1.Zero()
		k.k1 = nil
	}
	if k.ec != nil {
		wipe(k.ec.D)
		k.ec = nil
	}
	if k.rsa != nil {
		wipe(k.rsa.D)
		for _, p := range k.rsa.Primes {
			wipe(p)
		}
		wipe(k.rsa.Precomputed.Dp)
		wipe(k.rsa.Precomputed.Dq)
		wipe(k.rsa.Precomputed.Qinv)
		k.rsa = nil
	}
	return nil
}

// wipe zeroes the words of x, best effort: copies that math/big or
// crypto/rsa made along the way are out of reach.
func wipe(x *big.Int) {
	if x == nil {
		return
	}
	clear(x.Bits())
	x.SetInt64(0)
}

var errClosed = fmt.Errorf("inprocess: %w", signer.ErrClosed)

// SignContext signs msg (see signer.Signer): Ed25519 over the message, the
// others over its hash, ECDSA as r‖s (low-S on secp256k1). secp256k1
// signatures are deterministic (RFC 6979); P-256 and P-384 ones are not.
func (k *Key) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("inprocess: %w", err)
	}
	k.mu.RLock()
	defer k.mu.RUnlock()
	if k.closed {
		return nil, errClosed
	}
	tr := signer.ContextTrace(ctx)
	start := tr.Start()
	var sig []byte
	var err error
	switch k.alg {
	case signer.Ed25519:
		sig = ed25519.Sign(k.ed, msg)
	case signer.ECDSASecp256k1:
		sig = make([]byte, 64)
		s := k1ecdsa.Sign(k.k1, k.alg.Digest(msg))
		r, v := s.R(), s.S()
		r.PutBytesUnchecked(sig[:32])
		v.PutBytesUnchecked(sig[32:])
	case signer.ECDSAP256, signer.ECDSAP384:
		var r, s *big.Int
		if r, s, err = ecdsa.Sign(rand.Reader, k.ec, k.alg.Digest(msg)); err == nil {
			size := (k.ec.Curve.Params().BitSize + 7) / 8
			sig = make([]byte, 2*size)
			r.FillBytes(sig[:size])
			s.FillBytes(sig[size:])
		}
	case signer.RSAPKCS1v15, signer.RSAPSS:
		sig, err = k.signRSA(k.alg.Digest(msg), k.alg.SignerOpts())
	}
	tr.Measured(signer.StageSign, start)
	if err != nil {
		return nil, fmt.Errorf("inprocess: %w", err)
	}
	return sig, nil
}

// Sign implements crypto.Signer with the standard library's meaning.
// Ed25519 keys also make Ed25519ph and Ed25519ctx signatures when opts asks
// (*ed25519.Options). ECDSA signatures are ASN.1 DER; secp256k1 ones are
// deterministic (RFC 6979, rand is ignored) and low-S. RSA keys sign PKCS
// #1 v1.5 or, when opts is *rsa.PSSOptions, PSS, whatever their Algorithm.
func (k *Key) Sign(rnd io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	k.mu.RLock()
	defer k.mu.RUnlock()
	if k.closed {
		return nil, errClosed
	}
	if k.alg == signer.Ed25519 {
		// CheckSignerOpts refuses Ed25519ph and Ed25519ctx as
		// unsupported; crypto/ed25519 makes them, so only other errors
		// (nil options, other hashes) stop here.
		if err := signer.CheckSignerOpts(k.alg, digest, opts); err != nil && !isEd25519Variant(opts) {
			return nil, fmt.Errorf("inprocess: %w", err)
		}
		sig, err := k.ed.Sign(nil, digest, opts)
		if err != nil {
			return nil, fmt.Errorf("inprocess: %w: %w", signer.ErrInvalidMessage, err)
		}
		return sig, nil
	}
	if err := signer.CheckSignerOpts(k.alg, digest, opts); err != nil {
		return nil, fmt.Errorf("inprocess: %w", err)
	}
	switch k.alg {
	case signer.ECDSASecp256k1:
		return k1ecdsa.Sign(k.k1, digest).Serialize(), nil
	case signer.ECDSAP256, signer.ECDSAP384:
		return ecdsa.SignASN1(rnd, k.ec, digest)
	}
	return k.signRSA(digest, opts)
}

func (k *Key) signRSA(digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	if pss, ok := opts.(*rsa.PSSOptions); ok {
		return rsa.SignPSS(rand.Reader, k.rsa, pss.Hash, digest, pss)
	}
	return rsa.SignPKCS1v15(rand.Reader, k.rsa, opts.HashFunc(), digest)
}

// isEd25519Variant reports whether opts asks for Ed25519ph or Ed25519ctx.
func isEd25519Variant(opts crypto.SignerOpts) bool {
	if o, ok := opts.(*ed25519.Options); ok {
		return o != nil && (o.Hash == crypto.SHA512 || o.Context != "")
	}
	return opts != nil && opts.HashFunc() == crypto.SHA512
}

// clone returns a new Key over a copy of k's private key, so closing either
// leaves the other alone.
func (k *Key) clone() (*Key, error) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	switch {
	case k.closed:
		return nil, errClosed
	case k.ed != nil:
		return FromPrivateKey(k.ed, k.alg)
	case k.k1 != nil:
		d := k.k1.Key.Bytes()
		defer clear(d[:])
		return FromSeed(k.alg, d[:])
	case k.ec != nil:
		return FromPrivateKey(k.ec, k.alg)
	}
	return FromPrivateKey(k.rsa, k.alg)
}

// copyPublic returns a deep copy of a public key, so that what a caller
// does to a key it was given cannot reach the private key it came from.
func copyPublic(pub crypto.PublicKey) crypto.PublicKey {
	switch k := pub.(type) {
	case ed25519.PublicKey:
		return append(ed25519.PublicKey(nil), k...)
	case *ecdsa.PublicKey:
		return &ecdsa.PublicKey{Curve: k.Curve, X: new(big.Int).Set(k.X), Y: new(big.Int).Set(k.Y)}
	case *rsa.PublicKey:
		return &rsa.PublicKey{N: new(big.Int).Set(k.N), E: k.E}
	}
	return pub
}
