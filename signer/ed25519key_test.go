package signer_test

import (
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/signerkit/signerkit/signer"
)

func TestCheckEd25519PublicKey(t *testing.T) {
	seed := make([]byte, 32)
	for i := range seed {
		seed[i] = byte(i)
	}
	good := ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
	if err := signer.CheckEd25519PublicKey(good); err != nil {
		t.Fatalf("a real key: %v", err)
	}
	// The eight small-order points (the identity, the point of order 2,
	// two of order 4, four of order 8) and non-canonical encodings, as
	// listed by "Taming the many EdDSAs" (Chalkias et al.) and Zcash's
	// ZIP 215 test vectors.
	bad := []string{
		"0100000000000000000000000000000000000000000000000000000000000000", // identity
		"ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // order 2
		"0000000000000000000000000000000000000000000000000000000000000000", // order 4
		"0000000000000000000000000000000000000000000000000000000000000080", // order 4, x sign set ("-0")
		"c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a", // order 8
		"c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa", // order 8
		"26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05", // order 8
		"26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85", // order 8
		"0100000000000000000000000000000000000000000000000000000000000080", // identity, non-canonical sign
		"eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // y = p+1 (non-canonical)
		"edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // y = p
		"0200000000000000000000000000000000000000000000000000000000000000", // not on the curve
	}
	for _, h := range bad {
		pub, _ := hex.DecodeString(h)
		if err := signer.CheckEd25519PublicKey(pub); !errors.Is(err, signer.ErrInvalidKey) {
			t.Errorf("%s: %v, want ErrInvalidKey", h, err)
		}
	}
	for _, n := range []int{0, 31, 33} {
		if err := signer.CheckEd25519PublicKey(make([]byte, n)); !errors.Is(err, signer.ErrInvalidKey) {
			t.Errorf("%d bytes: %v", n, err)
		}
	}
	// The identity key really is the danger: one signature (R = identity,
	// S = 0) verifies under it for any message with crypto/ed25519.
	identity, _ := hex.DecodeString(bad[0])
	sig := append(append([]byte{}, identity...), make([]byte, 32)...)
	if !ed25519.Verify(identity, []byte("any message"), sig) || !ed25519.Verify(identity, []byte("another"), sig) {
		t.Log("crypto/ed25519 no longer accepts the identity key's constant signature")
	}
}
