package frost

import (
	"crypto/rand"
	"testing"

	"filippo.io/edwards25519"
)

// inSubgroupByL is the reference test of RFC 9591: [L]p is the identity,
// computed as [L-1]p + p (L is not a canonical scalar).
func inSubgroupByL(p *edwards25519.Point) bool {
	b := order
	b[0]-- // L ends in 0xed, so no borrow
	s, err := new(edwards25519.Scalar).SetCanonicalBytes(b[:])
	if err != nil {
		panic(err)
	}
	q := new(edwards25519.Point).VarTimeDoubleScalarBaseMult(s, p, edwards25519.NewScalar())
	q.Add(q, p)
	return q.Equal(edwards25519.NewIdentityPoint()) == 1
}

// torsion returns the 8 points of order dividing 8, T0 (the identity) to
// T7, Ti = [i]T1 for a point T1 of order 8.
func torsion(t *testing.T) []*edwards25519.Point {
	t.Helper()
	// A point of order 8 (its encoding is well known: 26e8958f…05).
	enc := []byte{0x26, 0xe8, 0x95, 0x8f, 0xc2, 0xb2, 0x27, 0xb0, 0x45, 0xc3, 0xf4, 0x89, 0xf2, 0xef, 0x98, 0xf0,
		0xd5, 0xdf, 0xac, 0x05, 0xd3, 0xc6, 0x33, 0x39, 0xb1, 0x38, 0x02, 0x88, 0x6d, 0x53, 0xfc, 0x05}
	t1, err := new(edwards25519.Point).SetBytes(enc)
	if err != nil {
		t.Fatal(err)
	}
	ts := []*edwards25519.Point{edwards25519.NewIdentityPoint()}
	for i := 1; i < 8; i++ {
		ts = append(ts, new(edwards25519.Point).Add(ts[i-1], t1))
	}
	if ts[7].Add(ts[7], t1).Equal(edwards25519.NewIdentityPoint()) != 1 || ts[4].Equal(edwards25519.NewIdentityPoint()) == 1 {
		t.Fatal("T1 is not of order 8")
	}
	ts[7].Subtract(ts[7], t1) // undo the check's Add
	return ts
}

// TestInPrimeOrderSubgroup compares the halving test with [L]p = identity
// on every coset of the subgroup: Q + Ti for random Q (including the
// identity) and each of the 8 torsion points, in affine (decoded) and
// projective (Z ≠ 1) form.
func TestInPrimeOrderSubgroup(t *testing.T) {
	ts := torsion(t)
	qs := []*edwards25519.Point{edwards25519.NewIdentityPoint(), edwards25519.NewGeneratorPoint()}
	for range 64 {
		s, err := randomScalar(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		qs = append(qs, new(edwards25519.Point).ScalarBaseMult(s))
	}
	in := 0
	for _, q := range qs {
		for i, ti := range ts {
			p := new(edwards25519.Point).Add(q, ti)
			decoded, err := new(edwards25519.Point).SetBytes(p.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			want := inSubgroupByL(p)
			if want != (i == 0) {
				t.Fatalf("reference: Q + T%d in the subgroup = %v", i, want)
			}
			if got := inPrimeOrderSubgroup(p); got != want {
				t.Fatalf("Q + T%d (projective): %v, want %v", i, got, want)
			}
			if got := inPrimeOrderSubgroup(decoded); got != want {
				t.Fatalf("Q + T%d (decoded): %v, want %v", i, got, want)
			}
			if want {
				in++
			}
		}
	}
	if in != len(qs) {
		t.Fatalf("%d points in the subgroup, want %d", in, len(qs))
	}
}

// FuzzInPrimeOrderSubgroup compares the two tests on any decodable
// encoding.
func FuzzInPrimeOrderSubgroup(f *testing.F) {
	f.Add(edwards25519.NewGeneratorPoint().Bytes())
	f.Add(make([]byte, 32))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := new(edwards25519.Point).SetBytes(b)
		if err != nil {
			return
		}
		if got, want := inPrimeOrderSubgroup(p), inSubgroupByL(p); got != want {
			t.Fatalf("%x: %v, want %v", b, got, want)
		}
	})
}
