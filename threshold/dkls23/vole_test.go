package dkls23

import (
	"crypto/rand"
	"errors"
	"testing"
)

// otPair runs the base OTs between a Bob (party 2, extension receiver)
// and an Alice (party 1, extension sender).
func otPair(t testing.TB) (*otSenderSetup, *otReceiverSetup) {
	t.Helper()
	sid := []byte("test base ot")
	snd, m1, err := newBaseOTSender(sid, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	alice := new(otSenderSetup)
	if _, err := rand.Read(alice.Delta[:]); err != nil {
		t.Fatal(err)
	}
	m2, seeds, err := baseOTReceive(sid, 2, m1, alice.Delta, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	alice.Seeds = seeds
	bob := new(otReceiverSetup)
	if bob.Seeds0, bob.Seeds1, err = snd.finish(1, m2); err != nil {
		t.Fatal(err)
	}
	return alice, bob
}

// TestBaseOT: the receiver's seed is the sender's seed of its choice bit,
// and differs from the other one.
func TestBaseOT(t *testing.T) {
	alice, bob := otPair(t)
	for i := range kappa {
		chosen, other := bob.Seeds0[i], bob.Seeds1[i]
		if bit(alice.Delta[:], i) == 1 {
			chosen, other = other, chosen
		}
		if alice.Seeds[i] != chosen || alice.Seeds[i] == other {
			t.Fatalf("transfer %d: the receiver's seed is not the chosen one", i)
		}
	}
}

// TestBaseOTBadProof: a sender's A whose proof is for another value is
// refused, naming the sender.
func TestBaseOTBadProof(t *testing.T) {
	sid := []byte("s")
	_, m1, err := newBaseOTSender(sid, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	_, other, _ := newBaseOTSender(sid, rand.Reader)
	m1.A = other.A
	var delta [kappa / 8]byte
	_, _, err = baseOTReceive(sid, 3, m1, delta, rand.Reader)
	var ae *AbortError
	if !errors.As(err, &ae) || ae.Party != 3 {
		t.Fatalf("bad proof: %v, want an *AbortError naming 3", err)
	}
}

// TestKOS: the extension's rows satisfy q_j = t_j ⊕ x_j·Δ, and a tampered
// column fails the sender's check, naming the receiver.
func TestKOS(t *testing.T) {
	alice, bob := otPair(t)
	sid := []byte("kos session")
	choice := make([]byte, xi/8)
	pad := make([]byte, kosPad/8)
	rand.Read(choice)
	rand.Read(pad)
	msg, trows := kosReceive(bob, sid, choice, pad)
	qrows, err := kosSend(alice, 2, sid, msg)
	if err != nil {
		t.Fatal(err)
	}
	d := deltaWords(&alice.Delta)
	for j := range xi {
		want := trows[j]
		if bit(choice, j) == 1 {
			want[0] ^= d[0]
			want[1] ^= d[1]
		}
		if qrows[j] != want {
			t.Fatalf("row %d: q ≠ t ⊕ x·Δ", j)
		}
	}
	for _, tamper := range []func(m *kosMsg){
		func(m *kosMsg) { m.U[5] ^= 1 },
		func(m *kosMsg) { m.U[colsLen-1] ^= 0x80 },
		func(m *kosMsg) { m.XTilde[0] ^= 1 },
		func(m *kosMsg) { m.TTilde[31] ^= 1 },
	} {
		bad := *msg
		tamper(&bad)
		_, err := kosSend(alice, 2, sid, &bad)
		var ae *AbortError
		if !errors.As(err, &ae) || ae.Party != 2 {
			t.Fatalf("tampered extension: %v, want an *AbortError naming 2", err)
		}
	}
}

// TestVOLE: c + d = b·a for Alice's a and Bob's random b.
func TestVOLE(t *testing.T) {
	alice, bob := otPair(t)
	for round := range 3 {
		sid := []byte{byte(round)}
		b, m1, err := voleBobStart(bob, sid, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		var a [ell]Scalar
		for k := range ell {
			a[k], _ = randomScalar(rand.Reader)
		}
		m2, c, err := voleAlice(alice, 2, sid, a, m1, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		d, err := b.finish(1, m2)
		if err != nil {
			t.Fatal(err)
		}
		for k := range ell {
			var sum, want Scalar
			sum.Add2(&c[k], &d[k])
			want.Mul2(&b.b, &a[k])
			if !sum.Equals(&want) {
				t.Fatalf("element %d: c + d ≠ b·a", k)
			}
		}
	}
}

// TestVOLECheatingAlice: an Alice whose correlations differ between
// transfers (one τ changed, in any element), or whose u or digest is
// wrong, is caught by Bob's check, which names her.
func TestVOLECheatingAlice(t *testing.T) {
	alice, bob := otPair(t)
	var one Scalar
	one.SetInt(1)
	for i, tamper := range []func(m *voleAliceMsg){
		func(m *voleAliceMsg) { m.Tau[0][0].Add(&one) },
		func(m *voleAliceMsg) { m.Tau[xi-1][1].Add(&one) },
		func(m *voleAliceMsg) { m.Tau[200][2].Add(&one) },
		func(m *voleAliceMsg) { m.U.Add(&one) },
		func(m *voleAliceMsg) { m.Digest[3] ^= 4 },
	} {
		// A changed τ_j moves the challenge, which depends on every τ,
		// so the digest differs whatever Bob's bit j is.
		sid := []byte{byte(i), 9}
		b, m1, err := voleBobStart(bob, sid, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		var a [ell]Scalar
		m2, _, err := voleAlice(alice, 2, sid, a, m1, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tamper(m2)
		_, err = b.finish(1, m2)
		var ae *AbortError
		if !errors.As(err, &ae) || ae.Party != 1 {
			t.Fatalf("case %d: %v, want an *AbortError naming 1", i, err)
		}
	}
}
