package dkls23

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"testing"
)

// TestKeygen: every party ends with the same public key and public
// shares, each share matches its public share, any two shares interpolate
// to the key of the public key, and the OT seeds of each pair agree.
func TestKeygen(t *testing.T) {
	shares, err := runKeygen(t, 2, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range shares {
		if !s.public.equal(shares[0].public) {
			t.Fatal("parties disagree on the public key")
		}
		if !baseMul(&s.x).equal(s.publicShares[s.ID-1]) {
			t.Fatalf("party %d's share does not match its public share", s.ID)
		}
	}
	for _, set := range [][]int{{1, 2}, {1, 3}, {2, 3}} {
		var sk Scalar
		for _, i := range set {
			l := lagrange(i, set)
			l.Mul(&shares[i-1].x)
			sk.Add(&l)
		}
		if !baseMul(&sk).equal(shares[0].public) {
			t.Fatalf("shares %v do not interpolate to the key", set)
		}
	}
	for _, a := range shares {
		for _, b := range shares {
			if a == b {
				continue
			}
			al, bo := a.alice[b.ID], b.bob[a.ID]
			for i := range kappa {
				want := bo.Seeds0[i]
				if bit(al.Delta[:], i) == 1 {
					want = bo.Seeds1[i]
				}
				if al.Seeds[i] != want {
					t.Fatalf("pair %d→%d: OT seeds disagree", a.ID, b.ID)
				}
			}
		}
	}
}

// TestKeygenMalicious: a party that lies in key generation is named.
func TestKeygenMalicious(t *testing.T) {
	const evil = 2
	off := headerLen
	cases := []struct {
		name  string
		round int
		at    int // byte offset from the header
		want  int // party named; 0 for an *EncodingError
	}{
		{"commitment", 1, 0, evil},
		{"base OT proof", 1, 32 + pointLen + pointLen + 5, evil},
		{"echo", 2, 0, evil},
		{"decommitment salt", 2, 32 + 3, evil},
		{"coefficient with a bad prefix", 2, 64, 0}, // 02/03 ^ 1<<2: not a compressed point
		{"share", 2, 64 + 2*pointLen + pointLen + scalarLen + 20, evil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := runKeygen(t, 2, 3, func(round, from, to int, msg []byte) {
				if round == c.round && from == evil {
					if c.want == 0 {
						msg[off+c.at] ^= 4
					} else {
						msg[off+c.at] ^= 1
					}
				}
			})
			var ae *AbortError
			var ee *EncodingError
			switch {
			case c.want == 0 && errors.As(err, &ee) && errors.As(err, &ae) && ae.Party == evil:
			case c.want != 0 && errors.As(err, &ae) && ae.Party == c.want:
			default:
				t.Fatalf("%v, want an abort naming %d", err, c.want)
			}
		})
	}
}

// TestShareEncoding: a share survives its encoding and signs after it; a
// share whose secret, public key or public shares were changed is
// refused.
func TestShareEncoding(t *testing.T) {
	shares := testShares(t)
	for i, s := range shares {
		b, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if shares[i], err = UnmarshalShare(b); err != nil {
			t.Fatal(err)
		}
		for _, at := range []int{6 + 31, 6 + 32, 6 + 32 + pointLen, 6 + 32 + 3*pointLen} {
			bad := bytes.Clone(b)
			bad[at] ^= 1 // the secret's last byte; points' prefixes (02 ↔ 03)
			if _, err := UnmarshalShare(bad); !errors.As(err, new(*EncodingError)) {
				t.Fatalf("byte %d changed: %v, want an *EncodingError", at, err)
			}
		}
	}
	pre, err := runPresign(t, shares, []int{2, 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	hash := sha256.Sum256([]byte("after a round trip through bytes"))
	sig, err := signWith(pre, shares[0].PublicKey(), hash[:])
	if err != nil {
		t.Fatal(err)
	}
	checkSig(t, shares[0].PublicKey(), hash[:], sig)
}
