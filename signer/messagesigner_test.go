package signer_test

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"io"
	"testing"

	"github.com/signerkit/signerkit/signer"
)

// algKey is a Signer of a given algorithm that records what it was asked.
type algKey struct {
	alg  signer.Algorithm
	msgs [][]byte
}

func (k *algKey) Public() crypto.PublicKey                                  { return nil }
func (k *algKey) Close() error                                              { return nil }
func (k *algKey) Algorithm() signer.Algorithm                               { return k.alg }
func (k *algKey) Sign(io.Reader, []byte, crypto.SignerOpts) ([]byte, error) { return nil, nil }
func (k *algKey) SignContext(_ context.Context, msg []byte) ([]byte, error) {
	k.msgs = append(k.msgs, msg)
	return []byte("sig"), nil
}

func TestSignMessageOpts(t *testing.T) {
	pssEq := &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash, Hash: crypto.SHA256}
	for _, c := range []struct {
		alg  signer.Algorithm
		opts crypto.SignerOpts
		ok   bool
	}{
		{signer.Ed25519, crypto.Hash(0), true},
		{signer.Ed25519, nil, true},
		{signer.Ed25519, &ed25519.Options{}, true},
		{signer.Ed25519, &ed25519.Options{Context: "x"}, false},
		{signer.Ed25519, &ed25519.Options{Hash: crypto.SHA512}, false},
		{signer.Ed25519, crypto.SHA256, false},
		{signer.ECDSAP256, crypto.SHA256, true},
		{signer.ECDSAP256, crypto.Hash(0), false},
		{signer.ECDSAP256, crypto.SHA384, false},
		{signer.RSAPSS, pssEq, true},
		{signer.RSAPSS, &rsa.PSSOptions{SaltLength: 32, Hash: crypto.SHA256}, true},
		{signer.RSAPSS, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthAuto, Hash: crypto.SHA256}, false},
		{signer.RSAPSS, crypto.SHA256, false},
		{signer.RSAPKCS1v15, crypto.SHA256, true},
		{signer.RSAPKCS1v15, pssEq, false},
		{signer.BLS12381MinPK, crypto.Hash(0), true},
	} {
		k := &algKey{alg: c.alg}
		msg := []byte("the whole message")
		sig, err := signer.SignMessage(k, msg, c.opts)
		if c.ok != (err == nil) || (err != nil && !errors.Is(err, signer.ErrUnsupported)) {
			t.Errorf("%v with %#v: %v, want ok %v", c.alg, c.opts, err, c.ok)
			continue
		}
		// Through crypto.SignMessage, as crypto/x509 calls it.
		if c.ok {
			if string(sig) != "sig" || len(k.msgs) != 1 || string(k.msgs[0]) != string(msg) {
				t.Errorf("%v: SignContext was asked %q", c.alg, k.msgs)
			}
			if _, err := crypto.SignMessage(messageSigner{k}, rand.Reader, msg, c.opts); err != nil {
				t.Errorf("%v: crypto.SignMessage: %v", c.alg, err)
			}
		} else if len(k.msgs) != 0 {
			t.Errorf("%v with %#v: refused, but SignContext was called", c.alg, c.opts)
		}
	}
}

// messageSigner gives algKey the crypto.MessageSigner method the module's
// signers have.
type messageSigner struct{ *algKey }

func (m messageSigner) SignMessage(_ io.Reader, msg []byte, opts crypto.SignerOpts) ([]byte, error) {
	return signer.SignMessage(m.algKey, msg, opts)
}
