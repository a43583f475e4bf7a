package bls

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"io"
	"sync"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// Signer is a BLS12-381 private key held in process memory. It signs
// with signer.BLS12381MinPK or BLS12381MinSig and implements
// signer.AlgorithmSigner. It is safe for concurrent use: signs run in
// parallel under a read lock, and Close waits for those in flight before
// it wipes the key.
type Signer struct {
	alg signer.Algorithm
	pub *PublicKey
	dst []byte // DST(alg)

	mu     sync.RWMutex // held for reading by signs, for writing by Close
	closed bool
	sk     secret
}

var _ signer.AlgorithmSigner = (*Signer)(nil)

var errClosed = fmt.Errorf("bls: %w", signer.ErrClosed)

func checkAlgorithm(alg signer.Algorithm) error {
	if !alg.IsBLS() {
		return fmt.Errorf("bls: %v is not a BLS algorithm (want bls12381-minpk or bls12381-minsig): %w", alg, signer.ErrUnsupported)
	}
	return available()
}

func newSigner(alg signer.Algorithm, sk *secret) *Signer {
	s := &Signer{alg: alg, sk: *sk, dst: []byte(DST(alg))}
	sk.wipe()
	s.pub = newPublicKey(alg, s.sk.public(alg))
	return s
}

// GenerateKey makes a new key for alg from 32 bytes of crypto/rand, as
// CometBFT's GenPrivKey does.
func GenerateKey(alg signer.Algorithm) (*Signer, error) {
	if err := checkAlgorithm(alg); err != nil {
		return nil, err
	}
	var ikm [32]byte
	defer clear(ikm[:])
	if _, err := rand.Read(ikm[:]); err != nil {
		return nil, fmt.Errorf("bls: %w", err)
	}
	return FromSeed(ikm[:], alg)
}

// FromSeed derives a key for alg from ikm, the input keying material of
// the IETF draft's KeyGen (draft-irtf-cfrg-bls-signature-04 and later,
// with the salt "BLS-SIG-KEYGEN-SALT-" and an empty key_info), which must
// be at least 32 bytes of secret randomness; a shorter ikm is an error
// wrapping signer.ErrInvalidKey. The same ikm gives the same scalar for
// both algorithms. ikm is the caller's to wipe.
func FromSeed(ikm []byte, alg signer.Algorithm) (*Signer, error) {
	if err := checkAlgorithm(alg); err != nil {
		return nil, err
	}
	var sk secret
	if len(ikm) < 32 || !sk.keyGen(ikm, nil) {
		return nil, fmt.Errorf("bls: KeyGen needs at least 32 bytes of keying material, got %d: %w", len(ikm), signer.ErrInvalidKey)
	}
	return newSigner(alg, &sk), nil
}

// FromCometBFTSecret derives the key that CometBFT v0.40's
// bls12381.GenPrivKeyFromSecret derives from secret: KeyGen on secret
// itself when it is 32 bytes long, else on its SHA-256. Any secret will do,
// so it is only as strong as the secret is hard to guess.
func FromCometBFTSecret(secret []byte, alg signer.Algorithm) (*Signer, error) {
	if len(secret) == 32 {
		return FromSeed(secret, alg)
	}
	ikm := sha256.Sum256(secret)
	defer clear(ikm[:])
	return FromSeed(ikm[:], alg)
}

// FromSecretKey makes a Signer for alg from a 32-byte big-endian scalar in
// [1, r): CometBFT's PrivKey.Bytes, or what SecretKey returns. Anything
// else is an error wrapping signer.ErrInvalidKey. b is the caller's to
// wipe.
func FromSecretKey(b []byte, alg signer.Algorithm) (*Signer, error) {
	if err := checkAlgorithm(alg); err != nil {
		return nil, err
	}
	var sk secret
	if len(b) != SecretKeySize || !sk.setBytes(b) {
		return nil, fmt.Errorf("bls: secret key is not a %d-byte big-endian scalar in [1, r): %w", SecretKeySize, signer.ErrInvalidKey)
	}
	return newSigner(alg, &sk), nil
}

// SecretKey returns the private key as the 32-byte big-endian scalar that
// FromSecretKey takes and CometBFT's PrivKey.Bytes returns, for export.
// The caller wipes it. After Close it returns an error wrapping
// signer.ErrClosed.
func (s *Signer) SecretKey() ([]byte, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, errClosed
	}
	return s.sk.appendBytes(make([]byte, 0, SecretKeySize)), nil
}

// Algorithm returns signer.BLS12381MinPK or BLS12381MinSig.
func (s *Signer) Algorithm() signer.Algorithm { return s.alg }

// Public returns the public key, a *PublicKey. It works after Close.
func (s *Signer) Public() crypto.PublicKey { return s.pub }

// PublicKey returns the public key.
func (s *Signer) PublicKey() *PublicKey { return s.pub }

// SignContext signs the whole message msg with the algorithm's DST
// (DSTMinPK or DSTMinSig) and returns the compressed signature: 96 bytes
// for min-pk, 48 for min-sig. BLS signatures are deterministic. ctx is
// checked once, before the sign, which is a bounded computation (about a
// millisecond) with nothing to wait on.
func (s *Signer) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("bls: %w", err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, errClosed
	}
	tr := signertrace.ContextTrace(ctx)
	start := tr.Start()
	sig := s.sk.sign(s.alg, msg, s.dst)
	tr.Measured(signertrace.StageSign, start)
	return sig, nil
}

// Sign implements crypto.Signer as crypto/ed25519 does: msg is the whole
// message, opts.HashFunc() must be 0 (crypto.Hash(0)), and rand is
// ignored. Anything else is refused with an error wrapping
// signer.ErrUnsupported (a hash) or ErrInvalidMessage (nil opts).
func (s *Signer) Sign(_ io.Reader, msg []byte, opts crypto.SignerOpts) ([]byte, error) {
	if opts == nil {
		return nil, fmt.Errorf("bls: nil crypto.SignerOpts: %w", signer.ErrInvalidMessage)
	}
	if h := opts.HashFunc(); h != 0 {
		return nil, fmt.Errorf("bls: BLS signs the message itself, not a %v digest: %w", h, signer.ErrUnsupported)
	}
	return s.SignContext(context.Background(), msg)
}

// SignDST signs msg with another DST, such as DSTMinPKPoP for the proof of
// possession scheme that Ethereum uses. Signatures under a DST other than
// the algorithm's do not verify with signer.Algorithm.Verify; check them
// with PublicKey.VerifyDST.
func (s *Signer) SignDST(msg, dst []byte) ([]byte, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, errClosed
	}
	return s.sk.sign(s.alg, msg, dst), nil
}

// PopProve returns a proof of possession of the private key (the IETF
// draft's PopProve: a signature of the compressed public key under
// PopDSTMinPK or PopDSTMinSig), which PopVerify checks.
func (s *Signer) PopProve() ([]byte, error) {
	return s.SignDST(s.pub.compressed, popDST(s.alg))
}

// Close wipes the private scalar (blst's SecretKey.Zeroize on the Signer's
// only copy: the constructors wipe the copies they made on the way). It
// waits for signs in flight and is idempotent; signs after it fail with
// signer.ErrClosed.
func (s *Signer) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		s.sk.wipe()
	}
	return nil
}
