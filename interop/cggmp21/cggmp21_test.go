package cggmp21

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/signerkit/signerkit/netshape"
)

// newMesh returns a same-zone Mesh closed when the test ends.
func newMesh(t testing.TB) *Mesh {
	t.Helper()
	m, err := NewMesh(PlacementOn(netshape.SameZone()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// checkSignature verifies a signature of the Signer with both
// implementations.
func checkSignature(t testing.TB, s *Signer, hash [32]byte, sigBytes []byte) {
	t.Helper()
	pub, err := PublicKey(s.Public())
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyDecred(pub, hash[:], sigBytes); err != nil {
		t.Fatal(err)
	}
	if err := VerifyTextbook(pub, hash[:], sigBytes); err != nil {
		t.Fatal(err)
	}
}

// TestKeygenPresignSign runs one key generation, a presignature of each
// pair of signers and online signs with each, and verifies every
// signature with decred's secp256k1 and the textbook check.
func TestKeygenPresignSign(t *testing.T) {
	m := newMesh(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	t0 := time.Now()
	keys, err := m.Keygen(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("key generation: %s", time.Since(t0))
	for _, pair := range [][2]int{{1, 2}, {2, 3}, {3, 1}} {
		p, err := m.Presign(ctx, keys, pair[0], pair[1])
		if err != nil {
			t.Fatal(err)
		}
		s, err := m.NewSigner(keys, pair[0], pair[1], []Presignature{p})
		if err != nil {
			t.Fatal(err)
		}
		hash := sha256.Sum256(fmt.Appendf(nil, "sign bytes of a gno transaction, signers %v", pair))
		sig, err := s.Sign(ctx, hash)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Signature(sig)
		if err != nil {
			t.Fatal(err)
		}
		checkSignature(t, s, hash, b)
		other := sha256.Sum256([]byte("another message"))
		if err := VerifyDecred(mustPub(t, s), other[:], b); !errors.Is(err, ErrSignature) {
			t.Fatalf("decred: a signature of another hash: %v", err)
		}
		if err := VerifyTextbook(mustPub(t, s), other[:], b); !errors.Is(err, ErrSignature) {
			t.Fatalf("textbook: a signature of another hash: %v", err)
		}
	}
	tr := m.Traffic()
	if tr.Payload <= 0 || tr.TLS <= tr.Payload || tr.Wire <= tr.TLS {
		t.Fatalf("traffic %+v: want 0 < payload < TLS < wire", tr)
	}
}

func mustPub(t testing.TB, s *Signer) []byte {
	t.Helper()
	pub, err := PublicKey(s.Public())
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

// TestLowS checks that Signature gives the same low-S bytes for a
// signature and its twin with S negated, and that both verifiers refuse
// the high-S form.
func TestLowS(t *testing.T) {
	keys := loadKeys(t)
	m := newMesh(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	p, err := m.Presign(ctx, keys, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	s, err := m.NewSigner(keys, 2, 3, []Presignature{p})
	if err != nil {
		t.Fatal(err)
	}
	hash := sha256.Sum256([]byte("low S"))
	sig, err := s.Sign(ctx, hash)
	if err != nil {
		t.Fatal(err)
	}
	twin := *sig
	twin.S = sig.S.Curve().NewScalar().Set(sig.S).Negate()
	a, err := Signature(sig)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Signature(&twin)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatalf("S and −S normalize to %x and %x", a, b)
	}
	checkSignature(t, s, hash, a)
	high := bytes.Clone(a)
	new(big.Int).Sub(orderN, new(big.Int).SetBytes(a[32:])).FillBytes(high[32:])
	pub := mustPub(t, s)
	if err := VerifyDecred(pub, hash[:], high); !errors.Is(err, ErrSignature) {
		t.Errorf("decred: high S: %v", err)
	}
	if err := VerifyTextbook(pub, hash[:], high); !errors.Is(err, ErrSignature) {
		t.Errorf("textbook: high S: %v", err)
	}
}
