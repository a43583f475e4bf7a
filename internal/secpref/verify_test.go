package secpref

import (
	"crypto/sha256"
	"testing"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
)

// TestVerify: signatures decred makes verify (decred signs low-S), and a
// changed message, signature or key, or a high S, does not.
func TestVerify(t *testing.T) {
	for i := range 8 {
		key, err := secp256k1.GeneratePrivateKey()
		if err != nil {
			t.Fatal(err)
		}
		pub := key.PubKey().SerializeCompressed()
		hash := sha256.Sum256([]byte{byte(i)})
		sig := ecdsa.Sign(key, hash[:])
		r, s := sig.R(), sig.S()
		rb, sb := r.Bytes(), s.Bytes()
		if !Verify(pub, hash[:], rb[:], sb[:]) {
			t.Fatal("a decred signature does not verify")
		}
		other := sha256.Sum256([]byte("other"))
		if Verify(pub, other[:], rb[:], sb[:]) {
			t.Fatal("verifies for another message")
		}
		high := s
		high.Negate()
		hb := high.Bytes()
		if Verify(pub, hash[:], rb[:], hb[:]) {
			t.Fatal("accepts a high S")
		}
		bad := rb
		bad[31] ^= 1
		if Verify(pub, hash[:], bad[:], sb[:]) {
			t.Fatal("verifies with a changed r")
		}
		key2, _ := secp256k1.GeneratePrivateKey()
		if Verify(key2.PubKey().SerializeCompressed(), hash[:], rb[:], sb[:]) {
			t.Fatal("verifies under another key")
		}
	}
}
