package frost

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"testing"

	"filippo.io/edwards25519"
	"github.com/signerkit/signerkit/signer"
)

// signWith runs commit, sign and aggregate for the participants chosen
// (by index into keys) and returns the signature.
func signWith(t *testing.T, keys []*KeyPackage, pub *PublicKeyPackage, chosen []int, msg []byte) []byte {
	t.Helper()
	var list []SigningCommitments
	nonces := map[Identifier]*SigningNonces{}
	for _, i := range chosen {
		n, err := Commit(keys[i], rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		nonces[keys[i].ID()] = n
		list = append(list, n.Commitments())
	}
	SortCommitments(list)
	var shares []SignatureShare
	for _, c := range list {
		k := keys[c.ID-1]
		sh, err := Sign(k, nonces[c.ID], msg, list)
		if err != nil {
			t.Fatal(err)
		}
		if err := VerifySignatureShare(pub, sh, msg, list); err != nil {
			t.Fatalf("participant %d: %v", c.ID, err)
		}
		shares = append(shares, sh)
	}
	sig, err := Aggregate(pub, msg, list, shares)
	if err != nil {
		t.Fatal(err)
	}
	if !ed25519.Verify(pub.GroupPublicKey(), msg, sig) {
		t.Fatalf("signature by %v does not verify with crypto/ed25519", chosen)
	}
	return sig
}

// subsets returns every subset of {0 … n-1} of size at least t.
func subsets(t, n int) [][]int {
	var out [][]int
	for mask := 1; mask < 1<<n; mask++ {
		var s []int
		for i := range n {
			if mask&(1<<i) != 0 {
				s = append(s, i)
			}
		}
		if len(s) >= t {
			out = append(out, s)
		}
	}
	return out
}

func TestSplitSeedSignsForTheSeedsKey(t *testing.T) {
	for _, tn := range [][2]int{{2, 3}, {3, 5}, {2, 2}, {4, 4}} {
		t.Run(fmt.Sprintf("%dof%d", tn[0], tn[1]), func(t *testing.T) {
			seed := make([]byte, ed25519.SeedSize)
			rand.Read(seed)
			want := ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
			d, err := SplitSeed(seed, tn[0], tn[1], rand.Reader)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(d.Public.GroupPublicKey(), want) {
				t.Fatalf("group key %x, want the seed's public key %x", d.Public.GroupPublicKey(), want)
			}
			for _, k := range d.Shares {
				if _, err := NewKeyPackage(k.ID(), k.SecretShare(), d.Commitment); err != nil {
					t.Fatalf("participant %d: %v", k.ID(), err)
				}
			}
			for _, s := range subsets(tn[0], tn[1]) {
				signWith(t, d.Shares, d.Public, s, []byte(fmt.Sprintf("message for %v", s)))
			}
		})
	}
}

func TestFewerThanThresholdCannotSign(t *testing.T) {
	d, err := Split(scalarFromUint(7), 2, 3, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := Commit(d.Shares[0], rand.Reader)
	list := []SigningCommitments{n.Commitments()}
	if _, err := Sign(d.Shares[0], n, []byte("m"), list); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Fatalf("sign with 1 of 2: %v", err)
	}
}

func TestRandomMessagesAndSubsets(t *testing.T) {
	keys, pub, err := RunDKG(2, 3, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	r := mrand.New(mrand.NewPCG(1, 2))
	for i := range 50 {
		msg := make([]byte, r.IntN(300))
		rand.Read(msg)
		s := subsets(2, 3)[r.IntN(4)]
		signWith(t, keys, pub, s, msg)
		_ = i
	}
}

func TestSignRefusesForeignCommitments(t *testing.T) {
	d, _ := Split(scalarFromUint(9), 2, 3, rand.Reader)
	n1, _ := Commit(d.Shares[0], rand.Reader)
	n2, _ := Commit(d.Shares[1], rand.Reader)
	other, _ := Commit(d.Shares[0], rand.Reader)
	list := []SigningCommitments{other.Commitments(), n2.Commitments()}
	if _, err := Sign(d.Shares[0], n1, []byte("m"), list); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Fatalf("sign with own commitments missing from the list: %v", err)
	}
	unsorted := []SigningCommitments{n2.Commitments(), n1.Commitments()}
	n1b, _ := Commit(d.Shares[0], rand.Reader)
	unsorted[1] = n1b.Commitments()
	if _, err := Sign(d.Shares[0], n1b, []byte("m"), unsorted); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Fatalf("sign with an unsorted list: %v", err)
	}
}

// TestBadShareIdentified: a participant that sends a wrong share is named
// by Aggregate and VerifySignatureShare, and no signature comes out.
func TestBadShareIdentified(t *testing.T) {
	d, _ := Split(scalarFromUint(11), 2, 3, rand.Reader)
	msg := []byte("vote")
	for _, cheat := range []int{0, 1} {
		n := []*SigningNonces{}
		var list []SigningCommitments
		for _, i := range []int{0, 2} {
			c, _ := Commit(d.Shares[i], rand.Reader)
			n = append(n, c)
			list = append(list, c.Commitments())
		}
		var shares []SignatureShare
		for j, i := range []int{0, 2} {
			sh, err := Sign(d.Shares[i], n[j], msg, list)
			if err != nil {
				t.Fatal(err)
			}
			if j == cheat {
				sh.Z.Add(sh.Z, scalarFromUint(1))
			}
			shares = append(shares, sh)
		}
		sig, err := Aggregate(d.Public, msg, list, shares)
		var se *ShareError
		if !errors.As(err, &se) || se.ID != list[cheat].ID || sig != nil {
			t.Fatalf("cheater %d: got sig %x, err %v; want a *ShareError naming it", list[cheat].ID, sig, err)
		}
		if !errors.Is(err, signer.ErrInvalidSignature) {
			t.Errorf("ShareError does not wrap ErrInvalidSignature")
		}
		if err := VerifySignatureShare(d.Public, shares[cheat], msg, list); err == nil {
			t.Error("VerifySignatureShare accepted the bad share")
		}
		if err := VerifySignatureShare(d.Public, shares[1-cheat], msg, list); err != nil {
			t.Errorf("VerifySignatureShare refused the honest share: %v", err)
		}
		// A share presented as another participant's is refused too.
		swapped := shares[1-cheat]
		swapped.ID = list[cheat].ID
		if err := VerifySignatureShare(d.Public, swapped, msg, list); err == nil {
			t.Error("a share verified as another participant's")
		}
	}
}

func TestDKG(t *testing.T) {
	for _, tn := range [][2]int{{2, 3}, {3, 5}} {
		keys, pub, err := RunDKG(tn[0], tn[1], rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range subsets(tn[0], tn[1]) {
			signWith(t, keys, pub, s, []byte("dkg"))
		}
		// Every participant derived the same public key package.
		b, _ := pub.MarshalBinary()
		if _, err := ParsePublicKeyPackage(b); err != nil {
			t.Fatalf("DKG public key package does not parse: %v", err)
		}
	}
}

// dkgRound runs round 1 for n participants.
func dkgRound1(t *testing.T, tt, n int) ([]*DKG, []*DKGRound1) {
	var ds []*DKG
	var r1 []*DKGRound1
	for i := range n {
		d, p, err := NewDKGSession(Identifier(i+1), tt, n, testCeremony, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		ds, r1 = append(ds, d), append(r1, p)
	}
	return ds, r1
}

func others(r1 []*DKGRound1, i int) []*DKGRound1 {
	var o []*DKGRound1
	for j, p := range r1 {
		if j != i {
			o = append(o, p)
		}
	}
	return o
}

func TestDKGIdentifiesCheaters(t *testing.T) {
	t.Run("bad proof of knowledge", func(t *testing.T) {
		ds, r1 := dkgRound1(t, 2, 3)
		// Participant 2 publishes a commitment whose constant term it
		// does not know (a rogue key), keeping its old proof.
		r1[1].Commitment[0] = new(edwards25519.Point).Add(r1[1].Commitment[0], edwards25519.NewGeneratorPoint())
		_, err := ds[0].Round2(others(r1, 0))
		var de *DKGError
		if !errors.As(err, &de) || de.Culprit != 2 || de.Round != 1 {
			t.Fatalf("got %v, want a round-1 *DKGError naming 2", err)
		}
	})
	t.Run("bad share", func(t *testing.T) {
		ds, r1 := dkgRound1(t, 2, 3)
		inbox := make([][]*DKGRound2, 3)
		for i, d := range ds {
			out, err := d.Round2(others(r1, i))
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range out {
				if m.From == 3 && m.To == 1 {
					m.Share.Add(m.Share, scalarFromUint(1))
				}
				inbox[m.To-1] = append(inbox[m.To-1], m)
			}
		}
		_, _, err := ds[0].Finish(inbox[0])
		var de *DKGError
		if !errors.As(err, &de) || de.Culprit != 3 || de.Round != 2 {
			t.Fatalf("got %v, want a round-2 *DKGError naming 3", err)
		}
		if _, _, err := ds[1].Finish(inbox[1]); err != nil {
			t.Fatalf("participant 2, who got good shares: %v", err)
		}
	})
	t.Run("wrong degree", func(t *testing.T) {
		ds, r1 := dkgRound1(t, 2, 3)
		_, big, _ := NewDKGSession(3, 3, 3, testCeremony, rand.Reader)
		r1[2] = big
		_, err := ds[0].Round2(others(r1, 0))
		var de *DKGError
		if !errors.As(err, &de) || de.Culprit != 3 {
			t.Fatalf("got %v, want a *DKGError naming 3", err)
		}
	})
}

var testCeremony = []byte("frost test ceremony")

// TestDKGBindsSession: the proof of knowledge once bound only the
// participant's identifier, so a round-1 package made for one key
// generation verified in any other. It now binds Φ (t, n and the ceremony
// identifier): a package from another ceremony, or made for another t or
// n, fails its proof and its sender is named.
func TestDKGBindsSession(t *testing.T) {
	ds, r1 := dkgRound1(t, 2, 3)
	for name, mk := range map[string]func() (*DKG, *DKGRound1, error){
		"another ceremony": func() (*DKG, *DKGRound1, error) {
			return NewDKGSession(3, 2, 3, []byte("another ceremony"), rand.Reader)
		},
		"another n": func() (*DKG, *DKGRound1, error) { return NewDKGSession(3, 2, 4, testCeremony, rand.Reader) },
	} {
		_, p, err := mk()
		if err != nil {
			t.Fatal(err)
		}
		o := others(r1, 0)
		o[1] = p // in place of participant 3's
		_, err = ds[0].Round2(o)
		var de *DKGError
		if !errors.As(err, &de) || de.Culprit != 3 || de.Round != 1 {
			t.Fatalf("%s: got %v, want a round-1 *DKGError naming 3", name, err)
		}
	}
	// The same ceremony's packages verify.
	if _, err := ds[0].Round2(others(r1, 0)); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][]byte{nil, make([]byte, MaxCeremonyID+1)} {
		if _, _, err := NewDKGSession(1, 2, 3, c, rand.Reader); !errors.Is(err, signer.ErrInvalidArgument) {
			t.Errorf("a %d-byte ceremony identifier: %v", len(c), err)
		}
	}
	// NewDKG binds t and n at least.
	d1, _, err := NewDKG(1, 2, 3, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	_, p2, _ := NewDKG(2, 2, 3, rand.Reader)
	_, p3, _ := NewDKG(3, 2, 4, rand.Reader)
	var de *DKGError
	if _, err := d1.Round2([]*DKGRound1{p2, p3}); !errors.As(err, &de) || de.Culprit != 3 {
		t.Fatalf("a package made for another n: %v, want a *DKGError naming 3", err)
	}
}
