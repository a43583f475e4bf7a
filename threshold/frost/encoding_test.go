package frost

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"testing"

	"filippo.io/edwards25519"
	"github.com/signerkit/signerkit/signer"
)

// badElements are encodings DeserializeElement must refuse, with why.
func badElements(t *testing.T) map[string][]byte {
	t.Helper()
	h := func(s string) []byte {
		b, err := hex.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// A point of order 8 (RFC 8032 small-order list), and G plus it,
	// which is on the curve but outside the prime-order subgroup.
	small := h("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05")
	sp, err := new(edwards25519.Point).SetBytes(small)
	if err != nil {
		t.Fatal(err)
	}
	mixed := new(edwards25519.Point).Add(sp, edwards25519.NewGeneratorPoint()).Bytes()
	notOnCurve := bytes.Repeat([]byte{0}, 32)
	notOnCurve[0] = 2 // y = 2 has no x
	return map[string][]byte{
		"identity":            edwards25519.NewIdentityPoint().Bytes(),
		"small order":         small,
		"torsion component":   mixed,
		"non-canonical y = p": h("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"),
		"non-canonical -0":    h("0100000000000000000000000000000000000000000000000000000000000080"),
		"not on the curve":    notOnCurve,
		"short":               edwards25519.NewGeneratorPoint().Bytes()[:31],
	}
}

func TestDeserializeElementRefuses(t *testing.T) {
	for name, b := range badElements(t) {
		if _, err := deserializeElement(b); err == nil {
			t.Errorf("%s (%x) accepted", name, b)
		}
	}
	if _, err := deserializeElement(edwards25519.NewGeneratorPoint().Bytes()); err != nil {
		t.Errorf("generator refused: %v", err)
	}
}

func TestDeserializeScalarRefuses(t *testing.T) {
	for _, b := range [][]byte{order[:], bytes.Repeat([]byte{0xff}, 32), make([]byte, 31)} {
		if _, err := deserializeScalar(b); err == nil {
			t.Errorf("%x accepted", b)
		}
	}
}

func TestEncodingsRoundTrip(t *testing.T) {
	d, err := Split(scalarFromUint(5), 2, 3, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := Commit(d.Shares[0], rand.Reader)
	c := n.Commitments()
	b, err := c.AppendBinary(nil)
	if err != nil || len(b) != SigningCommitmentsSize {
		t.Fatalf("commitments: %d bytes, %v", len(b), err)
	}
	c2, err := ParseSigningCommitments(b)
	if err != nil || !c2.Equal(c) {
		t.Fatalf("commitments round trip: %v", err)
	}
	sh := SignatureShare{ID: 3, Z: scalarFromUint(42)}
	b, _ = sh.AppendBinary(nil)
	sh2, err := ParseSignatureShare(b)
	if err != nil || sh2.ID != 3 || sh2.Z.Equal(sh.Z) != 1 {
		t.Fatalf("share round trip: %v", err)
	}
	b, _ = d.Commitment.AppendBinary(nil)
	vc, err := ParseVSSCommitment(b)
	if err != nil || len(vc) != 2 || vc[0].Equal(d.Commitment[0]) != 1 {
		t.Fatalf("VSS commitment round trip: %v", err)
	}
	kb, _ := d.Shares[1].MarshalBinary()
	kp, err := ParseKeyPackage(kb)
	if err != nil || kp.ID() != 2 || !bytes.Equal(kp.SecretShare(), d.Shares[1].SecretShare()) || kp.MinSigners() != 2 {
		t.Fatalf("key package round trip: %v", err)
	}
	pb, _ := d.Public.MarshalBinary()
	pp, err := ParsePublicKeyPackage(pb)
	if err != nil || !bytes.Equal(pp.GroupPublicKey(), d.Public.GroupPublicKey()) || len(pp.IDs()) != 3 {
		t.Fatalf("public key package round trip: %v", err)
	}
	// A public key package whose share 3 is off the polynomial.
	bad := bytes.Clone(pb)
	copy(bad[len(bad)-32:], edwards25519.NewGeneratorPoint().Bytes())
	if _, err := ParsePublicKeyPackage(bad); !errors.Is(err, signer.ErrProtocol) {
		t.Errorf("inconsistent public key package: %v", err)
	}
	dkg, r1, _ := NewDKGSession(1, 2, 3, []byte("encoding"), rand.Reader)
	b, _ = r1.AppendBinary(nil)
	r1b, err := ParseDKGRound1(b)
	if err != nil || !r1b.verifyProof(dkg.phi) {
		t.Fatalf("DKG round 1 round trip: %v", err)
	}
	_ = dkg
	r2 := &DKGRound2{From: 1, To: 2, Share: scalarFromUint(8)}
	b, _ = r2.AppendBinary(nil)
	if r2b, err := ParseDKGRound2(b); err != nil || r2b.From != 1 || r2b.To != 2 {
		t.Fatalf("DKG round 2 round trip: %v", err)
	}
}

func TestDecodersRefuseBadElements(t *testing.T) {
	d, _ := Split(scalarFromUint(5), 2, 3, rand.Reader)
	n, _ := Commit(d.Shares[0], rand.Reader)
	good, _ := n.Commitments().AppendBinary(nil)
	for name, e := range badElements(t) {
		if len(e) != 32 {
			continue
		}
		for _, off := range []int{2, 34} {
			b := bytes.Clone(good)
			copy(b[off:], e)
			_, err := ParseSigningCommitments(b)
			var ee *EncodingError
			if !errors.As(err, &ee) || !errors.Is(err, signer.ErrProtocol) {
				t.Errorf("commitments with %s at %d: %v", name, off, err)
			}
		}
	}
	for _, b := range [][]byte{good[:65], append(bytes.Clone(good), 0), append([]byte{0, 0}, good[2:]...)} {
		if _, err := ParseSigningCommitments(b); err == nil {
			t.Errorf("commitments %x accepted", b)
		}
	}
	share := append([]byte{0, 1}, order[:]...)
	if _, err := ParseSignatureShare(share); !errors.Is(err, signer.ErrProtocol) {
		t.Errorf("share with z = L: %v", err)
	}
}

// TestCanonicalEncoding checks canonicalEncoding against its definition
// (the point SetBytes decodes re-encodes to the same bytes) at every y
// around 0, 1 and p, with either sign bit, and at random encodings.
func TestCanonicalEncoding(t *testing.T) {
	refused := 0 // decodable but not canonical
	check := func(b []byte) {
		t.Helper()
		p, err := new(edwards25519.Point).SetBytes(b)
		if err != nil {
			return
		}
		want := string(p.Bytes()) == string(b)
		if canonicalEncoding(b) != want {
			t.Fatalf("canonicalEncoding(%x) = %v, want %v", b, !want, want)
		}
		if !want {
			refused++
		}
	}
	pMinus := func(k byte) []byte { // p - k, k < 0xed
		b := make([]byte, 32)
		for i := range b {
			b[i] = 0xff
		}
		b[0], b[31] = 0xed-k, 0x7f
		return b
	}
	var edges [][]byte
	for v := range 20 {
		b := make([]byte, 32)
		b[0] = byte(v)
		edges = append(edges, b)
	}
	for k := range 25 { // p-24 … p-1, p
		edges = append(edges, pMinus(byte(k)))
	}
	for v := 0xed; v <= 0xff; v++ { // p … 2^255-1
		b := pMinus(0)
		b[0] = byte(v)
		edges = append(edges, b)
	}
	for _, b := range edges {
		for _, sign := range []byte{0, 0x80} {
			c := slices.Clone(b)
			c[31] |= sign
			check(c)
		}
	}
	// At least -0 at y = 1 and y = p - 1, and y = p (which is y = 0).
	if refused < 3 {
		t.Fatalf("only %d decodable non-canonical edge cases", refused)
	}
	for range 5000 {
		b := make([]byte, 32)
		rand.Read(b)
		check(b)
		p := new(edwards25519.Point).ScalarBaseMult(scalarFromUint(uint64(b[0]) + 1))
		e := p.Bytes()
		check(e)
		e[31] ^= 0x80
		check(e)
	}
}

// TestAppendEncodings checks the batch encoding against Point.Bytes, for
// batches of 1 to 9 points mixing random points, the identity and a point
// of order 2 (whose x is 0), after operations that leave Z ≠ 1.
func TestAppendEncodings(t *testing.T) {
	y := make([]byte, 32) // y = p - 1: (0, -1), of order 2
	for i := range y {
		y[i] = 0xff
	}
	y[0], y[31] = 0xec, 0x7f
	order2, err := new(edwards25519.Point).SetBytes(y)
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 9; n++ {
		ps := make([]*edwards25519.Point, n)
		for i := range ps {
			s, _ := randomScalar(rand.Reader)
			p := new(edwards25519.Point).ScalarBaseMult(s)
			switch i % 4 {
			case 1:
				p.Add(p, p)
			case 2:
				p = edwards25519.NewIdentityPoint().Add(edwards25519.NewIdentityPoint(), edwards25519.NewGeneratorPoint())
				p.Subtract(p, edwards25519.NewGeneratorPoint()) // the identity, Z ≠ 1
			case 3:
				p.Add(order2, edwards25519.NewIdentityPoint())
			}
			ps[i] = p
		}
		got := appendEncodings([]byte("prefix"), ps...)
		want := []byte("prefix")
		for _, p := range ps {
			want = append(want, p.Bytes()...)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%d points: appendEncodings = %x, want %x", n, got, want)
		}
	}
}

// TestAppendCommitmentElements: the batch encoding is AppendBinary's
// without the identifiers, and refuses incomplete commitments.
func TestAppendCommitmentElements(t *testing.T) {
	d, err := Split(scalarFromUint(77), 2, 3, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	var cs []SigningCommitments
	var want []byte
	for i := range 5 {
		n, _ := Commit(d.Shares[i%3], rand.Reader)
		c := n.Commitments()
		cs = append(cs, c)
		enc, err := c.AppendBinary(nil)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, enc[2:]...)
	}
	got, err := AppendCommitmentElements([]byte{9}, cs...)
	if err != nil || !bytes.Equal(got, append([]byte{9}, want...)) {
		t.Fatalf("AppendCommitmentElements = %x, %v; want 09%x", got, err, want)
	}
	if _, err := AppendCommitmentElements(nil, SigningCommitments{ID: 1, Hiding: cs[0].Hiding}); err == nil {
		t.Fatal("a commitment without its binding element encoded")
	}
}
