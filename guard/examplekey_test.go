package guard_test

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"io"
)

// exampleKey is a minimal in-memory Ed25519 signer.Signer for the example.
type exampleKey struct{ priv ed25519.PrivateKey }

func newExampleKey() *exampleKey {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	return &exampleKey{priv}
}

func (k *exampleKey) Public() crypto.PublicKey { return k.priv.Public() }
func (k *exampleKey) Close() error             { return nil }
func (k *exampleKey) Sign(_ io.Reader, msg []byte, _ crypto.SignerOpts) ([]byte, error) {
	return ed25519.Sign(k.priv, msg), nil
}
func (k *exampleKey) SignContext(_ context.Context, msg []byte) ([]byte, error) {
	return ed25519.Sign(k.priv, msg), nil
}
