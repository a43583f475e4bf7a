package signer_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"testing"

	"filippo.io/edwards25519"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
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

// TestSmallOrderListIndependent recomputes signertest's list of small-order
// encodings with edwards25519 alone: the eight canonical ones are the
// multiples of one point T with [8]T = identity, all distinct, and the
// non-canonical ones are exactly their sign-bit and y + p variants.
func TestSmallOrderListIndependent(t *testing.T) {
	keys := signertest.SmallOrderEd25519Keys()
	canon := keys[:signertest.SmallOrderCanonical]
	identity := edwards25519.NewIdentityPoint()
	eight := func(p *edwards25519.Point) *edwards25519.Point {
		q := new(edwards25519.Point).Set(p)
		for range 3 {
			q.Add(q, q)
		}
		return q
	}
	// T is a point of order exactly 8: [8]T = identity and [4]T ≠ identity.
	var T *edwards25519.Point
	for _, k := range canon {
		p, err := new(edwards25519.Point).SetBytes(k)
		if err != nil {
			t.Fatalf("%x does not decode: %v", k, err)
		}
		if eight(p).Equal(identity) != 1 {
			t.Fatalf("%x: [8]P is not the identity", k)
		}
		q := new(edwards25519.Point).Add(p, p)
		q.Add(q, q)
		if q.Equal(identity) != 1 && T == nil {
			T = p
		}
	}
	if T == nil {
		t.Fatal("no point of order 8 in the list")
	}
	want := map[string]bool{}
	m := edwards25519.NewIdentityPoint()
	for range 8 {
		want[hex.EncodeToString(m.Bytes())] = true
		m.Add(m, T)
	}
	if len(want) != 8 {
		t.Fatalf("T generates %d points, want 8", len(want))
	}
	for _, k := range canon {
		if !want[hex.EncodeToString(k)] {
			t.Errorf("%x is not a multiple of T", k)
		}
		delete(want, hex.EncodeToString(k))
	}
	if len(want) != 0 {
		t.Errorf("missing from the list: %v", want)
	}
	// Non-canonical variants: the sign bit flipped, and y + p when it fits
	// in 255 bits, with either sign bit.
	p := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 255), big.NewInt(19))
	reversed := func(b []byte) []byte { r := bytes.Clone(b); slices.Reverse(r); return r }
	le := func(b []byte) *big.Int { return new(big.Int).SetBytes(reversed(b)) }
	isCanon := map[string]bool{}
	for _, k := range canon {
		isCanon[hex.EncodeToString(k)] = true
	}
	variants := map[string]bool{}
	add := func(b []byte) {
		if !isCanon[hex.EncodeToString(b)] {
			variants[hex.EncodeToString(b)] = true
		}
	}
	for _, k := range canon {
		flipped := bytes.Clone(k)
		flipped[31] ^= 0x80
		add(flipped)
		y := bytes.Clone(k)
		y[31] &= 0x7f
		yp := new(big.Int).Add(le(y), p)
		if yp.BitLen() <= 255 {
			enc := reversed(yp.FillBytes(make([]byte, 32)))
			add(enc)
			enc2 := bytes.Clone(enc)
			enc2[31] |= 0x80
			add(enc2)
		}
	}
	rest := keys[signertest.SmallOrderCanonical:]
	if len(rest) != len(variants) {
		t.Errorf("%d non-canonical encodings listed, %d computed", len(rest), len(variants))
	}
	for _, k := range rest {
		if !variants[hex.EncodeToString(k)] {
			t.Errorf("%x is not a computed non-canonical variant", k)
		}
		q, err := new(edwards25519.Point).SetBytes(k)
		if err != nil {
			t.Errorf("%x does not decode (decoders accept it): %v", k, err)
			continue
		}
		if bytes.Equal(q.Bytes(), k) || eight(q).Equal(identity) != 1 {
			t.Errorf("%x: canonical, or not of small order", k)
		}
	}
}

// TestSmallOrderKeysRefused: every small-order encoding is refused by
// CheckEd25519PublicKey, Ed25519.CheckKey, Ed25519.Verify and
// signertest.VerifyStd with ErrInvalidKey, even with a signature that
// crypto/ed25519 accepts; a real key passes all of them.
func TestSmallOrderKeysRefused(t *testing.T) {
	good := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32))
	goodPub := good.Public().(ed25519.PublicKey)
	msg := []byte("a vote")
	if err := signer.Ed25519.CheckKey(goodPub); err != nil {
		t.Fatalf("CheckKey, a real key: %v", err)
	}
	if err := signer.Ed25519.Verify(goodPub, msg, ed25519.Sign(good, msg)); err != nil {
		t.Fatalf("Verify, a real key: %v", err)
	}
	if err := signertest.VerifyStd(signer.Ed25519, goodPub, msg, ed25519.Sign(good, msg)); err != nil {
		t.Fatalf("VerifyStd, a real key: %v", err)
	}
	// R = identity, S = 0 verifies under a small-order key A for every
	// message whose challenge k = H(R‖A‖M) has [k]A = identity: all of
	// them under the identity, one in 2, 4 or 8 under the others.
	forged := append(bytes.Clone(edwards25519.NewIdentityPoint().Bytes()), make([]byte, 32)...)
	for _, k := range signertest.SmallOrderEd25519Keys() {
		pub := ed25519.PublicKey(k)
		var m []byte
		for i := range 1000 {
			if c := fmt.Appendf(nil, "message %d", i); ed25519.Verify(pub, c, forged) {
				m = c
				break
			}
		}
		if m == nil {
			t.Fatalf("%x: no message found that the forged signature verifies for", k)
		}
		if err := signer.CheckEd25519PublicKey(k); !errors.Is(err, signer.ErrInvalidKey) {
			t.Errorf("CheckEd25519PublicKey(%x) = %v, want ErrInvalidKey", k, err)
		}
		if err := signer.Ed25519.CheckKey(pub); !errors.Is(err, signer.ErrInvalidKey) {
			t.Errorf("Ed25519.CheckKey(%x) = %v, want ErrInvalidKey", k, err)
		}
		if err := signer.Ed25519.Verify(pub, m, forged); !errors.Is(err, signer.ErrInvalidKey) {
			t.Errorf("Ed25519.Verify(%x) of a forged signature = %v, want ErrInvalidKey", k, err)
		}
		if err := signertest.VerifyStd(signer.Ed25519, pub, m, forged); !errors.Is(err, signer.ErrInvalidKey) {
			t.Errorf("signertest.VerifyStd(%x) of a forged signature = %v, want ErrInvalidKey", k, err)
		}
	}
}
