package yubihsm

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"fmt"
	"io"
	"math/big"
	"sync"

	"github.com/certusone/yubihsm-go/commands"

	"github.com/signerkit/signerkit/internal/eckey"
	"github.com/signerkit/signerkit/signer"
)

// Signer is an Ed25519, ECDSA (P-256, P-384, secp256k1) or RSA key
// inside a YubiHSM 2, as a
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
	obj   object // as the Store described it, for the RSA key's capabilities

	closeOnce sync.Once
}

var _ signer.AlgorithmSigner = (*Signer)(nil)

// ID returns the key's object id.
func (k *Signer) ID() uint16 { return k.id }

// Label returns the key's label as the device stores it.
func (k *Signer) Label() string { return k.label }

// Algorithm returns the key's algorithm: signer.Ed25519, ECDSAP256,
// ECDSAP384, ECDSASecp256k1, RSAPKCS1v15 or RSAPSS.
func (k *Signer) Algorithm() signer.Algorithm { return k.alg }

// Public returns the public key, read when the key was opened: a copy
// (an ed25519.PublicKey, *ecdsa.PublicKey or *rsa.PublicKey) the caller may modify
// without affecting the Signer.
func (k *Signer) Public() crypto.PublicKey { return clonePublic(k.pub) }

// clonePublic returns a deep copy of an Ed25519, ECDSA or RSA public key.
func clonePublic(pub crypto.PublicKey) crypto.PublicKey {
	switch p := pub.(type) {
	case ed25519.PublicKey:
		return ed25519.PublicKey(bytes.Clone(p))
	case *ecdsa.PublicKey:
		return eckey.Clone(p)
	case *rsa.PublicKey:
		return &rsa.PublicKey{N: new(big.Int).Set(p.N), E: p.E}
	}
	return pub
}

// SignContext signs msg on the device: Sign EdDSA over the message itself
// (at most MaxEd25519Message bytes); Sign ECDSA over its hash under the
// algorithm (SHA-256, or SHA-384 on P-384), returned as r‖s (low-S on
// secp256k1, whatever S the device gave); Sign PKCS1 or Sign PSS (MGF1
// with SHA-256, a 32-byte salt) over its SHA-256.
func (k *Signer) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	switch {
	case k.alg == signer.Ed25519:
		return k.signEdDSA(ctx, msg)
	case k.alg.IsRSA():
		return k.signRSA(ctx, k.alg == signer.RSAPSS, crypto.SHA256, k.alg.Digest(msg), crypto.SHA256.Size())
	}
	der, err := k.signECDSA(ctx, k.alg.Digest(msg))
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
// signer.ErrUnsupported); ECDSA over the digest, returned in ASN.1 DER
// (low-S on secp256k1); RSA PSS when opts is an *rsa.PSSOptions (MGF1 with
// the digest's hash; a salt as long as the hash unless it names another
// length), else PKCS #1 v1.5. The device learns an RSA digest's hash from
// its length, so RSA takes SHA-256, SHA-384 and SHA-512 digests only.
// rand is ignored: the device draws its own nonces. Sign takes no context:
// it gives up after Config.SignTimeout (DefaultSignTimeout) with an error
// wrapping context.DeadlineExceeded.
func (k *Signer) Sign(_ io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	if err := signer.CheckSignerOpts(k.alg, digest, opts); err != nil {
		return nil, fmt.Errorf("yubihsm: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), k.l.cfg.signTimeout())
	defer cancel()
	switch {
	case k.alg == signer.Ed25519:
		return k.signEdDSA(ctx, digest)
	case k.alg.IsRSA():
		return k.signRSAOpts(ctx, digest, opts)
	}
	return k.signECDSADigest(ctx, digest)
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
