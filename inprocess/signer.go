package inprocess

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"io"
	"math/big"
	"sync"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"

	"github.com/signerkit/signerkit/internal/eckey"
	"github.com/signerkit/signerkit/internal/ed25519sign"
	"github.com/signerkit/signerkit/internal/secp256k1sign"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// Signer is a private key held in process memory. It is safe for
// concurrent use: any number of signs run in parallel, and Close waits for
// those in flight before it wipes the key.
type Signer struct {
	alg signer.Algorithm
	pub crypto.PublicKey

	mu     sync.RWMutex // held for reading by signs, for writing by Close
	closed bool
	ed     *ed25519sign.PrivateKey // Ed25519, in memory from ed25519sign.NewLocked
	edFree func()                  // wipes and releases ed
	k1     *secp256k1.PrivateKey   // ECDSASecp256k1, owned: zeroed on Close
	ec     *ecdsa.PrivateKey       // ECDSAP256, ECDSAP384
	rsa    *rsa.PrivateKey         // RSAPKCS1v15, RSAPSS
}

var _ signer.AlgorithmSigner = (*Signer)(nil)

// Algorithm returns the algorithm SignContext uses.
func (k *Signer) Algorithm() signer.Algorithm { return k.alg }

// Public returns a copy of the public key: ed25519.PublicKey,
// *ecdsa.PublicKey or *rsa.PublicKey. Changing it changes nothing in the
// Signer. It works after Close.
func (k *Signer) Public() crypto.PublicKey { return copyPublic(k.pub) }

// Close wipes the key: Ed25519 and secp256k1 keys completely (an Ed25519
// key, signed with package internal/ed25519sign rather than
// crypto/ed25519, leaves no copy in crypto/ed25519's key cache); for P-256,
// P-384 and RSA keys, the words of the math/big private values, while the
// copies that crypto/ecdsa and crypto/rsa keep for themselves (RSA's
// precomputed key, ECDSA's key cache) are out of reach and are only
// dropped. It waits for signs in flight and is idempotent.
func (k *Signer) Close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return nil
	}
	k.closed = true
	if k.edFree != nil {
		k.edFree()
		k.ed, k.edFree = nil, nil
	}
	if k.k1 != nil {
		k.k1.Zero()
		k.k1 = nil
	}
	if k.ec != nil {
		wipe(eckey.Scalar(k.ec))
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
func (k *Signer) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("inprocess: %w", err)
	}
	k.mu.RLock()
	defer k.mu.RUnlock()
	if k.closed {
		return nil, errClosed
	}
	tr := signertrace.ContextTrace(ctx)
	start := tr.Start()
	var sig []byte
	var err error
	switch k.alg {
	case signer.Ed25519:
		sig = k.ed.Sign(msg)
	case signer.ECDSASecp256k1:
		sig = secp256k1sign.Sign(k.k1, k.alg.Digest(msg))
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
	tr.Measured(signertrace.StageSign, start)
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
//
// Sign takes no context and needs none: there is no device or connection
// to wait on, only a bounded computation (tens of microseconds for
// Ed25519 and ECDSA, a few milliseconds for RSA-4096) under a read lock
// that only Close contends for, and Close waits at most for the signs
// already in flight. SignContext is the same sign with a ctx that is
// checked once, before it starts.
func (k *Signer) Sign(rnd io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
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
		context := ""
		if o, ok := opts.(*ed25519.Options); ok && o != nil {
			context = o.Context
		}
		var hash crypto.Hash
		if opts != nil {
			hash = opts.HashFunc()
		}
		sig, err := k.ed.SignOptions(digest, hash, context)
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
		return secp256k1sign.SignASN1(k.k1, digest), nil
	case signer.ECDSAP256, signer.ECDSAP384:
		return ecdsa.SignASN1(rnd, k.ec, digest)
	}
	return k.signRSA(digest, opts)
}

func (k *Signer) signRSA(digest []byte, opts crypto.SignerOpts) ([]byte, error) {
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

// clone returns a new Signer over a copy of k's private key, so closing either
// leaves the other alone.
func (k *Signer) clone() (*Signer, error) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	switch {
	case k.closed:
		return nil, errClosed
	case k.ed != nil:
		seed := k.ed.AppendSeed(make([]byte, 0, ed25519.SeedSize))
		defer clear(seed)
		return FromSeed(seed, k.alg)
	case k.k1 != nil:
		d := k.k1.Key.Bytes()
		defer clear(d[:])
		return FromSeed(d[:], k.alg)
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
		return eckey.Clone(k)
	case *rsa.PublicKey:
		return &rsa.PublicKey{N: new(big.Int).Set(k.N), E: k.E}
	}
	return pub
}
