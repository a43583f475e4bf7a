package ed25519sign

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"testing"
)

func TestNewKeyFromSeed(t *testing.T) {
	seed := make([]byte, SeedSize)
	rand.Read(seed)
	got, err := NewKeyFromSeed(seed)
	if err != nil || !bytes.Equal(got, ed25519.NewKeyFromSeed(seed)) {
		t.Fatalf("NewKeyFromSeed = %x, %v; crypto/ed25519 says %x", got, err, ed25519.NewKeyFromSeed(seed))
	}
	if _, err := NewKeyFromSeed(seed[1:]); err == nil {
		t.Error("a 31-byte seed accepted")
	}
	if err := CheckPrivateKey(got); err != nil {
		t.Errorf("CheckPrivateKey of a good key: %v", err)
	}
	bad := bytes.Clone(got)
	bad[SeedSize] ^= 1
	if err := CheckPrivateKey(bad); err == nil {
		t.Error("CheckPrivateKey accepted another public half")
	}
	if err := CheckPrivateKey(got[:63]); err == nil {
		t.Error("CheckPrivateKey accepted 63 bytes")
	}
}
