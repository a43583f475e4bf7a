package dkls23

import (
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"testing"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
	"github.com/signerkit/signerkit/internal/refsecp256k1"
)

// runPresign runs presigning among the parties of set, with tamper (if
// not nil) applied to every message, and returns their presignatures by
// party or the first error.
func runPresign(t testing.TB, shares []*Share, set []int, tamper tamperFunc) (map[int]*Presignature, error) {
	t.Helper()
	sid := make([]byte, 16)
	rand.Read(sid)
	ps := map[int]*Presign{}
	out := map[int]map[int][]byte{}
	for _, i := range set {
		p, m, err := NewPresign(shares[i-1], sid, set, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		ps[i], out[i] = p, m
	}
	apply(out, 1, tamper)
	in := Deliver(out)
	out = map[int]map[int][]byte{}
	for _, i := range set {
		var err error
		if out[i], err = ps[i].Round2(in[i]); err != nil {
			return nil, err
		}
	}
	apply(out, 2, tamper)
	in = Deliver(out)
	res := map[int]*Presignature{}
	for _, i := range set {
		p, err := ps[i].Finish(in[i])
		if err != nil {
			return nil, err
		}
		res[i] = p
	}
	return res, nil
}

// signWith signs hash with the presignatures and combines the shares.
func signWith(pre map[int]*Presignature, pub, hash []byte) (*ecdsa.Signature, error) {
	var shares []*SignShare
	for _, p := range pre {
		s, err := p.Sign(hash)
		if err != nil {
			return nil, err
		}
		shares = append(shares, s)
	}
	return Combine(pub, hash, shares)
}

// checkSig verifies sig under decred's ECDSA and under the math/big
// verifier, and requires a low S.
func checkSig(t *testing.T, pub, hash []byte, sig *ecdsa.Signature) {
	t.Helper()
	pk, err := secp256k1.ParsePubKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	if !sig.Verify(hash, pk) {
		t.Fatal("decred does not verify the signature")
	}
	r, s := sig.R(), sig.S()
	rb, sb := r.Bytes(), s.Bytes()
	if !refsecp256k1.VerifyLowS(pub, hash, rb[:], sb[:]) {
		t.Fatal("the math/big verifier does not verify the signature (or S is high)")
	}
}

// TestSign: every pair of a 2-of-3 key signs, and the signatures verify
// under both verifiers; the signature verifies for the pair's message
// only.
func TestSign(t *testing.T) {
	shares := testShares(t)
	pub := shares[0].PublicKey()
	for _, set := range [][]int{{1, 2}, {1, 3}, {3, 2}} {
		pre, err := runPresign(t, shares, set, nil)
		if err != nil {
			t.Fatal(err)
		}
		hash := sha256.Sum256([]byte{byte(set[0]), byte(set[1]), 'm'})
		sig, err := signWith(pre, pub, hash[:])
		if err != nil {
			t.Fatal(err)
		}
		checkSig(t, pub, hash[:], sig)
		other := sha256.Sum256([]byte("another message"))
		r, s := sig.R(), sig.S()
		rb, sb := r.Bytes(), s.Bytes()
		if refsecp256k1.VerifyLowS(pub, other[:], rb[:], sb[:]) {
			t.Fatal("the signature verifies for another message")
		}
		// A presignature signs once.
		for _, p := range pre {
			if _, err := p.Sign(hash[:]); !errors.As(err, new(*UsageError)) {
				t.Fatalf("second use of a presignature: %v", err)
			}
		}
	}
}

// TestSign3of3 runs a 3-of-3 key, where each party multiplies with two
// others and the echo of the commitments matters.
func TestSign3of3(t *testing.T) {
	shares, err := runKeygen(t, 3, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	pre, err := runPresign(t, shares, []int{1, 2, 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	hash := sha256.Sum256([]byte("three of three"))
	sig, err := signWith(pre, shares[0].PublicKey(), hash[:])
	if err != nil {
		t.Fatal(err)
	}
	checkSig(t, shares[0].PublicKey(), hash[:], sig)
}

// TestPresignMalicious: a party that lies in presigning is named by the
// check that catches it; a lie only the signature can reveal (ψ) aborts
// the combination.
func TestPresignMalicious(t *testing.T) {
	shares := testShares(t)
	const evil = 3
	h := headerLen
	m2 := h + 32 + pointLen + 32 // Γ^u
	vole := m2 + 2*pointLen + scalarLen
	cases := []struct {
		name  string
		round int
		at    int
		want  int // party named; -1 for an *EncodingError naming the party
	}{
		{"commitment", 1, h + 3, evil},
		{"OT extension column", 1, h + 32 + 32 + 100, evil},
		{"OT extension check", 1, presign1Len - 1, evil},
		{"echo", 2, h + 1, evil},
		{"decommitted R", 2, h + 32, evil},
		{"salt", 2, h + 32 + pointLen + 7, evil},
		{"Γ^u", 2, m2, evil},
		{"Γ^v", 2, m2 + pointLen, evil},
		{"multiplication τ", 2, vole + 32 + 1000, evil},
		{"multiplication u", 2, vole + 32 + xi*corrLen*scalarLen + 20, evil},
		{"multiplication γ", 2, presign2Len - 5, evil},
		{"ψ", 2, m2 + 2*pointLen + 20, 0},
		{"version", 2, 0, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pre, err := runPresign(t, shares, []int{1, evil}, func(round, from, to int, msg []byte) {
				if round == c.round && from == evil {
					msg[c.at] ^= 1
				}
			})
			if err == nil {
				hash := sha256.Sum256([]byte("m"))
				_, err = signWith(pre, shares[0].PublicKey(), hash[:])
			}
			var ae *AbortError
			var ee *EncodingError
			switch {
			case c.want == -1 && errors.As(err, &ee) && errors.As(err, &ae) && ae.Party == evil:
			case c.want >= 0 && errors.As(err, &ae) && ae.Party == c.want:
			default:
				t.Fatalf("%v, want an abort naming %d", err, c.want)
			}
		})
	}
}

// TestRoundsOnce: each round runs once and in order, a failure included.
func TestRoundsOnce(t *testing.T) {
	shares := testShares(t)
	p, _, err := NewPresign(shares[0], []byte("s"), []int{1, 2}, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Finish(nil); !errors.As(err, new(*UsageError)) {
		t.Fatalf("Finish before round 2: %v", err)
	}
	if _, err := p.Round2(nil); err == nil {
		t.Fatal("round 2 without messages succeeded")
	}
	if _, err := p.Round2(nil); !errors.As(err, new(*UsageError)) {
		t.Fatalf("round 2 again: %v", err)
	}
	k, err := NewKeygen([]byte("k"), 1, 2, 3, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.Round2(nil); !errors.As(err, new(*UsageError)) {
		t.Fatalf("keygen round 2 first: %v", err)
	}
	if _, err := k.Round1(); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Round1(); !errors.As(err, new(*UsageError)) {
		t.Fatalf("keygen round 1 again: %v", err)
	}
	if _, _, err := NewPresign(shares[0], nil, []int{1, 1}, rand.Reader); !errors.As(err, new(*UsageError)) {
		t.Fatalf("a set with a party twice: %v", err)
	}
}
