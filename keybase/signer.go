package keybase

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/signerkit/signerkit/internal/eckey"
	"github.com/signerkit/signerkit/internal/secp256k1sign"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// Mode says when a Signer decrypts its key.
type Mode uint8

const (
	// UnlockOnce decrypts the key when the Signer opens and keeps it in
	// memory until Close wipes it: a sign then costs what the signature
	// costs. The default.
	UnlockOnce Mode = iota
	// PerSign decrypts the key on every sign, running bcrypt each time
	// (about a quarter of a second at DefaultCost), and wipes it after, as
	// gnokey's keybase.Sign does (docs/protocols.md C.4). It is here to measure
	// that path; it keeps the Secret for the Signer's life and calls it on
	// every sign. No copy of an Ed25519 key stays in memory between signs:
	// keys are expanded and signed with signerkit's own Ed25519, never
	// crypto/ed25519, whose key cache keeps a copy of every key it signs
	// with out of reach of any wipe.
	PerSign
)

// String returns "unlock-once" or "per-sign".
func (m Mode) String() string {
	switch m {
	case UnlockOnce:
		return "unlock-once"
	case PerSign:
		return "per-sign"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// passphrase calls secret for a key's passphrase, which the caller wipes
// once the key is derived.
func passphrase(secret signer.Secret) ([]byte, error) {
	if secret == nil {
		return nil, fmt.Errorf("keybase: no passphrase: set Config.Secret: %w", signer.ErrInvalidArgument)
	}
	b, err := secret()
	if err != nil {
		return nil, fmt.Errorf("keybase: passphrase: %w", err)
	}
	return b, nil
}

// Signer is a key of a gnokey key file open for signing (see Mode). It
// signs Ed25519 (pure) or ECDSA on secp256k1 over SHA-256 as tm2 does
// (deterministic, low-S, r‖s from SignContext). It is safe for concurrent
// use: signs run in parallel, and Close waits for those in flight before it
// wipes the key.
type Signer struct {
	name string // for messages
	mode Mode
	alg  signer.Algorithm
	pub  crypto.PublicKey

	mu     sync.RWMutex // read-held by signs, write-held by Close
	closed bool
	key    *privateKey   // UnlockOnce
	sealed *sealedKey    // PerSign
	secret signer.Secret // PerSign
}

var _ signer.AlgorithmSigner = (*Signer)(nil)

// OpenArmor opens a private key armored by gnokey (`gnokey export`) or
// EncryptArmor as a Signer, with secret for its passphrase. In either mode
// it decrypts the key once, so a wrong passphrase fails here; that
// derivation is reported as the kdf stage to ctx's trace. In PerSign mode
// the Signer calls secret again on every sign.
func OpenArmor(ctx context.Context, armor []byte, secret signer.Secret, mode Mode) (*Signer, error) {
	s, err := parsePrivateArmor(armor)
	if err != nil {
		return nil, err
	}
	return newSigner(ctx, "", s, nil, secret, mode)
}

// newSigner decrypts s once with secret and opens it in mode. want, when
// not nil, is the public key the key must have. It takes s: a PerSign
// Signer keeps it until Close, and otherwise an unencrypted s is wiped
// here.
func newSigner(ctx context.Context, name string, s *sealedKey, want crypto.PublicKey, secret signer.Secret, mode Mode) (*Signer, error) {
	if mode != UnlockOnce && mode != PerSign {
		s.wipe()
		return nil, fmt.Errorf("keybase: unknown mode %v: %w", mode, signer.ErrInvalidArgument)
	}
	k, err := unseal(ctx, s, secret)
	if err != nil {
		s.wipe()
		return nil, named(name, err)
	}
	pub := k.public()
	if want != nil && !equalPublic(pub, want) {
		k.wipe()
		s.wipe()
		return nil, named(name, fmt.Errorf("keybase: the private key does not match the public key stored with it: %w", signer.ErrCorrupt))
	}
	out := &Signer{name: name, mode: mode, alg: k.alg, pub: pub}
	if mode == PerSign {
		k.wipe()
		out.sealed, out.secret = s, secret
	} else {
		s.wipe()
		out.key = k
	}
	return out, nil
}

// unseal gets the passphrase, derives the key and decrypts, reporting the
// kdf stage.
func unseal(ctx context.Context, s *sealedKey, secret signer.Secret) (*privateKey, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("keybase: %w", err)
	}
	p, err := passphrase(secret)
	if err != nil {
		return nil, err
	}
	tr := signertrace.ContextTrace(ctx)
	start := tr.Start()
	k, err := s.open(ctx, p)
	clear(p)
	if !s.plaintext {
		tr.Measured(signertrace.StageKDF, start)
	}
	return k, err
}

func equalPublic(a, b crypto.PublicKey) bool {
	switch a := a.(type) {
	case ed25519.PublicKey:
		return a.Equal(b)
	case *ecdsa.PublicKey:
		return a.Equal(b)
	}
	return false
}

// named prefixes err with a key's name, when known. A *PassphraseError
// without a label gets the name in its Label instead.
func named(name string, err error) error {
	if name == "" || err == nil {
		return err
	}
	if pe, ok := err.(*PassphraseError); ok && pe.Label == "" {
		c := *pe
		c.Label = name
		return &c
	}
	return &keyError{name: name, err: err}
}

// keyError says which key an error is about.
type keyError struct {
	name string
	err  error
}

func (e *keyError) Error() string {
	return fmt.Sprintf("keybase: key %q: %s", e.name, strings.TrimPrefix(e.err.Error(), "keybase: "))
}
func (e *keyError) Unwrap() error { return e.err }

// Mode returns the mode the Signer was opened in.
func (s *Signer) Mode() Mode { return s.mode }

// Algorithm returns signer.Ed25519 or signer.ECDSASecp256k1.
func (s *Signer) Algorithm() signer.Algorithm { return s.alg }

// Public returns the public key: ed25519.PublicKey or *ecdsa.PublicKey on
// signer.Secp256k1(). It works after Close.
func (s *Signer) Public() crypto.PublicKey {
	if s.alg == signer.Ed25519 {
		return append(ed25519.PublicKey(nil), s.pub.(ed25519.PublicKey)...)
	}
	p := s.pub.(*ecdsa.PublicKey)
	return eckey.Clone(p)
}

var errClosed = fmt.Errorf("keybase: %w", signer.ErrClosed)

// Close wipes the key (UnlockOnce) or drops the Secret (PerSign; an
// unencrypted key's bytes, which it keeps, are wiped). It waits for signs
// in flight and is idempotent.
func (s *Signer) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.key.wipe()
	s.sealed.wipe()
	s.key, s.sealed, s.secret = nil, nil, nil
	return nil
}

// withKey runs f with the private key: the one held (UnlockOnce), or one
// decrypted for this call and wiped after it (PerSign), reporting the kdf
// stage to ctx's trace.
func (s *Signer) withKey(ctx context.Context, f func(*privateKey) ([]byte, error)) ([]byte, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, errClosed
	}
	if s.mode == UnlockOnce {
		return f(s.key)
	}
	k, err := unseal(ctx, s.sealed, s.secret)
	if err != nil {
		return nil, named(s.name, err)
	}
	defer k.wipe()
	return f(k)
}

// SignContext signs msg (see signer.Signer): Ed25519 over the message;
// secp256k1 over its SHA-256 as r‖s, low-S, deterministic (RFC 6979), as
// tm2 signs. The sign stage, and in PerSign mode the kdf stage, are
// reported to ctx's trace. In PerSign mode the key derivation stops when
// ctx is done.
func (s *Signer) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("keybase: %w", err)
	}
	return s.withKey(ctx, func(k *privateKey) ([]byte, error) {
		tr := signertrace.ContextTrace(ctx)
		start := tr.Start()
		var sig []byte
		if k.alg == signer.Ed25519 {
			sig = k.signEd25519(msg)
		} else {
			sig = secp256k1sign.Sign(k.k1, k.alg.Digest(msg))
		}
		tr.Measured(signertrace.StageSign, start)
		return sig, nil
	})
}

// Sign implements crypto.Signer with the standard library's meaning:
// Ed25519 over the message itself (opts.HashFunc() == 0; Ed25519ph and
// Ed25519ctx are refused with signer.ErrUnsupported), secp256k1 over a
// SHA-256 digest as ASN.1 DER (low-S, deterministic). rand is ignored.
func (s *Signer) Sign(_ io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	if err := signer.CheckSignerOpts(s.alg, digest, opts); err != nil {
		return nil, fmt.Errorf("keybase: %w", err)
	}
	return s.withKey(context.Background(), func(k *privateKey) ([]byte, error) {
		if k.alg == signer.Ed25519 {
			return k.signEd25519(digest), nil
		}
		return secp256k1sign.SignASN1(k.k1, digest), nil
	})
}
