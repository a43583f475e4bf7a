package keybase_test

import (
	"context"
	"crypto/ed25519"
	"testing"

	"github.com/signerkit/signerkit/keybase"
	"github.com/signerkit/signerkit/signer"
)

// BenchmarkSignEd25519 signs a 128-byte message (a vote's size) with an
// unlocked Ed25519 key: the cost of the sign itself.
func BenchmarkSignEd25519(b *testing.B) {
	ctx := context.Background()
	priv := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	pass := []byte("benchmark")
	armor, err := keybase.EncryptArmor(ctx, priv, pass, keybase.MinCost)
	if err != nil {
		b.Fatal(err)
	}
	s, err := keybase.OpenArmor(ctx, armor, signer.SecretBytes(pass), keybase.UnlockOnce)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	msg := make([]byte, 128)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.SignContext(ctx, msg); err != nil {
			b.Fatal(err)
		}
	}
}
