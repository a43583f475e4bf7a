package yubihsm

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/sha256"
	"fmt"
	"io"
	"sync"

	"github.com/certusone/yubihsm-go/commands"

	"github.com/signerkit/signerkit/internal/eckey"
	"github.com/signerkit/signerkit/signer"
)

// Signer is an Ed25519 or ECDSA P-256 key inside a YubiHSM 2, as a
// signer.AlgorithmSigner; Open and Store.OpenKey return one. It keeps
// Config.Sessions sessions of its own, opened on first use, replaced
// before their message limit and pinged while idle. It is safe for
// concurrent use: signs queue for a session, and Close waits for those in
// flight.
type Signer struct {
	l     *link
	pool  *pool
	id    uint16
	label string
	alg   signer.Algorithm
	pub   crypto.PublicKey

	closeOnce sync.Once
}

var _ signer.AlgorithmSigner = (*Signer)(nil)

// ID returns the key's object id.
func (k *Signer) ID() uint16 { return k.id }

// Label returns the key's label as the device stores it.
func (k *Signer) Label() string { return k.label }

// Algorithm returns signer.Ed25519 or signer.ECDSAP256.
func (k *Signer) Algorithm() signer.Algorithm { return k.alg }

// Public returns the public key, read when the key was opened: a copy
// (an ed25519.PublicKey or *ecdsa.PublicKey) the caller may modify
// without affecting the Signer.
func (k *Signer) Public() crypto.PublicKey { return clonePublic(k.pub) }

// clonePublic returns a deep copy of an Ed25519 or P-256 public key.
func clonePublic(pub crypto.PublicKey) crypto.PublicKey {
	switch p := pub.(type) {
	case ed25519.PublicKey:
		return ed25519.PublicKey(bytes.Clone(p))
	case *ecdsa.PublicKey:
		return eckey.Clone(p)
	}
	return pub
}

// SignContext signs msg on the device: Sign EdDSA over the message itself
// (at most MaxEd25519Message bytes), or Sign ECDSA over its SHA-256,
// returned as r‖s.
func (k *Signer) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	if k.alg == signer.Ed25519 {
		return k.signEdDSA(ctx, msg)
	}
	d := sha256.Sum256(msg)
	der, err := k.signECDSA(ctx, d[:])
	if err != nil {
		return nil, err
	}
	sig, err := signer.ECDSAToRaw(k.alg, der)
	if err != nil {
		return nil, fmt.Errorf("yubihsm: sign with %04x: the device's signature: %w", k.id, err)
	}
	return sig, nil
}

// Sign implements crypto.Signer: pure Ed25519 over digest, which for
// Ed25519 is the message itself (Ed25519ph and Ed25519ctx are refused with
// signer.ErrUnsupported), or ECDSA over the digest, returned in ASN.1 DER.
// rand is ignored: the device draws its own nonces. Sign takes no context:
// it gives up after Config.SignTimeout (DefaultSignTimeout) with an error
// wrapping context.DeadlineExceeded.
func (k *Signer) Sign(_ io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	if err := signer.CheckSignerOpts(k.alg, digest, opts); err != nil {
		return nil, fmt.Errorf("yubihsm: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), k.l.cfg.signTimeout())
	defer cancel()
	if k.alg == signer.Ed25519 {
		return k.signEdDSA(ctx, digest)
	}
	// ECDSA takes the leftmost 256 bits of a longer hash; a shorter one is
	// its value as an integer, so left-padding with zeros keeps it.
	d := make([]byte, 32)
	if len(digest) >= 32 {
		copy(d, digest[:32])
	} else {
		copy(d[32-len(digest):], digest)
	}
	der, err := k.signECDSA(ctx, d)
	if err != nil {
		return nil, err
	}
	if _, err := signer.ECDSAToRaw(k.alg, der); err != nil {
		return nil, fmt.Errorf("yubihsm: sign with %04x: the device's signature: %w", k.id, err)
	}
	return der, nil
}

func (k *Signer) signEdDSA(ctx context.Context, msg []byte) ([]byte, error) {
	if len(msg) > MaxEd25519Message {
		return nil, fmt.Errorf("yubihsm: %d-byte message, the device signs at most %d: %w", len(msg), MaxEd25519Message, signer.ErrMessageTooLarge)
	}
	resp, err := k.pool.do(ctx, func() (*commands.CommandMessage, error) {
		return commands.CreateSignDataEddsaCommand(k.id, msg)
	})
	if err != nil {
		return nil, wrap(err, "sign with %04x", k.id)
	}
	r, ok := resp.(*commands.SignDataEddsaResponse)
	if !ok || len(r.Signature) != ed25519.SignatureSize {
		return nil, &protocolError{fmt.Sprintf("Sign EdDSA answered %T", resp)}
	}
	// The signature is a slice of the response yubihsm-go decrypted into
	// a buffer of its own for this command, so it needs no copy.
	return r.Signature, nil
}

func (k *Signer) signECDSA(ctx context.Context, digest []byte) ([]byte, error) {
	resp, err := k.pool.do(ctx, func() (*commands.CommandMessage, error) {
		return commands.CreateSignDataEcdsaCommand(k.id, digest)
	})
	if err != nil {
		return nil, wrap(err, "sign with %04x", k.id)
	}
	r, ok := resp.(*commands.SignDataEcdsaResponse)
	if !ok {
		return nil, &protocolError{fmt.Sprintf("Sign ECDSA answered %T", resp)}
	}
	return r.Signature, nil // not shared: see signEdDSA
}

// Close waits for signs in flight, closes the key's sessions and, if it is
// the last user of the connection, wipes the derived authentication key.
// It is idempotent and always returns nil; signs after it fail with
// signer.ErrClosed.
func (k *Signer) Close() error {
	k.closeOnce.Do(func() {
		k.pool.close()
		k.l.release()
	})
	return nil
}
