package frost

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"filippo.io/edwards25519"
	"github.com/signerkit/signerkit/internal/statefile"
	"github.com/signerkit/signerkit/signer"
)

// TestRFC9591VectorsCachedEncodings runs the RFC 9591 vector with every
// encoding taken from where it is at hand rather than computed: the
// commitments decoded from their encodings (as a party and the
// coordinator receive them) and the key packages decoded from theirs. The
// binding factors, shares and signature are the vector's.
func TestRFC9591VectorsCachedEncodings(t *testing.T) {
	raw, err := os.ReadFile("testdata/frost-ed25519-sha512.json")
	if err != nil {
		t.Fatal(err)
	}
	var v vectorFile
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	var coeffs []*edwards25519.Scalar
	for _, c := range v.Inputs.Coefficients {
		coeffs = append(coeffs, scalarHex(t, c))
	}
	dealt, err := split(scalarHex(t, v.Inputs.GroupSecretKey), coeffs, 3)
	if err != nil {
		t.Fatal(err)
	}
	pubEnc, _ := dealt.Public.MarshalBinary()
	pub, err := ParsePublicKeyPackage(pubEnc)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[Identifier]*KeyPackage{}
	for _, kp := range dealt.Shares {
		enc, _ := kp.MarshalBinary()
		if keys[kp.ID()], err = ParseKeyPackage(enc); err != nil {
			t.Fatal(err)
		}
	}
	msg := unhex(t, v.Inputs.Message)
	var list []SigningCommitments
	nonces := map[Identifier]*SigningNonces{}
	for _, o := range v.RoundOne.Outputs {
		id := Identifier(o.Identifier)
		n := commitWith(id, keys[id].secret, unhex(t, o.HidingRandomness), unhex(t, o.BindingRandomness))
		nonces[id] = n
		enc := append(append([]byte{0, byte(id)}, unhex(t, o.HidingCommitment)...), unhex(t, o.BindingCommitment)...)
		c, err := ParseSigningCommitments(enc)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(c.encoding(), enc[2:]) {
			t.Fatalf("participant %d: decoded commitments carry %x, want %x", id, c.encoding(), enc[2:])
		}
		list = append(list, c)
	}
	s := newSessionEnc(pub.group, pub.groupEnc, list, msg)
	for i, o := range v.RoundOne.Outputs {
		if got := hex.EncodeToString(s.binding[i].Bytes()); got != o.BindingFactor {
			t.Errorf("participant %d: binding factor %s, want %s", o.Identifier, got, o.BindingFactor)
		}
	}
	var shares []SignatureShare
	for _, o := range v.RoundTwo.Outputs {
		id := Identifier(o.Identifier)
		sh, err := Sign(keys[id], nonces[id], msg, list)
		if err != nil {
			t.Fatalf("participant %d: sign: %v", id, err)
		}
		if got := hex.EncodeToString(sh.Z.Bytes()); got != o.SigShare {
			t.Errorf("participant %d: signature share %s, want %s", id, got, o.SigShare)
		}
		if err := VerifySignatureShare(pub, sh, msg, list); err != nil {
			t.Errorf("participant %d: verify_signature_share: %v", id, err)
		}
		shares = append(shares, sh)
	}
	sig, err := Aggregate(pub, msg, list, shares)
	if err != nil {
		t.Fatal(err)
	}
	if want := unhex(t, v.Final.Sig); !bytes.Equal(sig, want) {
		t.Errorf("signature %x, want %x", sig, want)
	}
	if got := hex.EncodeToString(pub.GroupPublicKey()); got != v.Inputs.GroupPublicKey {
		t.Errorf("group public key %s, want %s", got, v.Inputs.GroupPublicKey)
	}
	// GroupPublicKey hands out a copy of the cached encoding.
	pub.GroupPublicKey()[0] ^= 1
	keys[1].GroupPublicKey()[0] ^= 1
	if got := hex.EncodeToString(pub.GroupPublicKey()); got != v.Inputs.GroupPublicKey {
		t.Errorf("group public key after changing a returned copy: %s", got)
	}
	if got := hex.EncodeToString(keys[1].GroupPublicKey()); got != v.Inputs.GroupPublicKey {
		t.Errorf("key package's group public key after changing a returned copy: %s", got)
	}
}

// TestCachedEncodingFollowsPoints: a decoded commitment whose points are
// replaced is encoded from its new points, never from the bytes it was
// decoded from.
func TestCachedEncodingFollowsPoints(t *testing.T) {
	d, err := Split(scalarFromUint(7), 2, 3, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	n1, _ := Commit(d.Shares[0], rand.Reader)
	n2, _ := Commit(d.Shares[1], rand.Reader)
	other, _ := Commit(d.Shares[1], rand.Reader)
	enc, _ := n2.Commitments().AppendBinary(nil)
	c, err := ParseSigningCommitments(enc)
	if err != nil {
		t.Fatal(err)
	}
	c.Hiding, c.Binding = other.Commitments().Hiding, other.Commitments().Binding
	if c.encoding() != nil {
		t.Fatal("commitments with replaced points still carry the old encoding")
	}
	got, _ := c.AppendBinary(nil)
	want, _ := other.Commitments().AppendBinary(nil)
	if !bytes.Equal(got, want) {
		t.Fatalf("AppendBinary after replacing the points: %x, want %x", got, want)
	}
	elems, _ := AppendCommitmentElements(nil, c)
	if !bytes.Equal(elems, want[2:]) {
		t.Fatalf("AppendCommitmentElements after replacing the points: %x, want %x", elems, want[2:])
	}
	// The share is over the new points: it aggregates with other's.
	msg := []byte("replaced")
	list := []SigningCommitments{n1.Commitments(), c}
	sh1, err := Sign(d.Shares[0], n1, msg, list)
	if err != nil {
		t.Fatal(err)
	}
	sh2, err := Sign(d.Shares[1], other, msg, list)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Aggregate(d.Public, msg, list, []SignatureShare{sh1, sh2}); err != nil {
		t.Fatal(err)
	}
	// Lists that mix commitments with and without encodings encode as
	// lists without any.
	plain := []SigningCommitments{n1.Commitments(), n2.Commitments(), other.Commitments()}
	mixed := []SigningCommitments{n1.Commitments(), n2.Commitments(), other.Commitments()}
	enc2, _ := other.Commitments().AppendBinary(nil)
	if mixed[2], err = ParseSigningCommitments(enc2); err != nil {
		t.Fatal(err)
	}
	mixed[1] = withEncoding(mixed[1], enc[2:])
	_, a := encodeGroupAndList(nil, nil, plain)
	_, b := encodeGroupAndList(nil, nil, mixed)
	if !bytes.Equal(a, b) {
		t.Fatalf("commitment list encodings differ:\n%x\n%x", a, b)
	}
	ea, _ := AppendCommitmentElements([]byte{9}, plain...)
	eb, _ := AppendCommitmentElements([]byte{9}, mixed...)
	if !bytes.Equal(ea, eb) {
		t.Fatalf("commitment elements differ:\n%x\n%x", ea, eb)
	}
}

// TestNonceStoreCommitmentsCarryEncodings: the store's commitments, made
// by Generate or loaded from the file, carry their encodings.
func TestNonceStoreCommitmentsCarryEncodings(t *testing.T) {
	f := newNonceFixture(t)
	var mem statefile.MemFS
	s, err := OpenNonceStore(f.d.Shares[0], NonceStoreConfig{FS: &mem, Capacity: 8})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := s.Generate(3)
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, ps []Presigned) {
		t.Helper()
		for _, p := range ps {
			c := p.Commitments
			want := append(c.Hiding.Bytes(), c.Binding.Bytes()...)
			if !bytes.Equal(c.encoding(), want) {
				t.Fatalf("%s: commitments carry %x, want %x", what, c.encoding(), want)
			}
		}
	}
	check("generated", ps)
	if err := f.sign(t, s, ps[0], []byte("m")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2, err := OpenNonceStore(f.d.Shares[0], NonceStoreConfig{FS: &mem})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	out := s2.Outstanding()
	if len(out) != 2 {
		t.Fatalf("%d outstanding after reopen, want 2", len(out))
	}
	check("loaded", out)
	for _, p := range out {
		if err := f.sign(t, s2, p, []byte("after reopen")); err != nil {
			t.Fatal(err)
		}
	}
}

// TestNonceStoreSignAmong: SignAmong signs with the list of the others'
// commitments (in any order) and the pair's own, refuses what Sign
// refuses, and leaves the pair fresh when it refuses the list.
func TestNonceStoreSignAmong(t *testing.T) {
	d, err := Split(scalarFromUint(4242), 3, 4, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := OpenNonceStore(d.Shares[1], NonceStoreConfig{FS: &statefile.MemFS{}, Capacity: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ps, err := s.Generate(4)
	if err != nil {
		t.Fatal(err)
	}
	msg := []byte("among")
	n1, _ := Commit(d.Shares[0], rand.Reader)
	n4, _ := Commit(d.Shares[3], rand.Reader)
	own := ps[0]
	// Refused before the mark: the pair stays fresh.
	for _, tc := range []struct {
		name   string
		others []SigningCommitments
	}{
		{"too few", []SigningCommitments{n4.Commitments()}},
		{"own identifier among the others", []SigningCommitments{n4.Commitments(), ps[1].Commitments}},
		{"repeated", []SigningCommitments{n4.Commitments(), n4.Commitments()}},
		{"no points", []SigningCommitments{n4.Commitments(), {ID: 1}}},
	} {
		if _, err := s.SignAmong(own.Handle, msg, tc.others); !errors.Is(err, signer.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", tc.name, err)
		}
	}
	if _, ok := s.Lookup(own.Handle); !ok {
		t.Fatal("a refused list consumed the pair")
	}
	// The others out of order; the list is sorted with the own in place.
	sh2, err := s.SignAmong(own.Handle, msg, []SigningCommitments{n4.Commitments(), n1.Commitments()})
	if err != nil {
		t.Fatal(err)
	}
	list := []SigningCommitments{n1.Commitments(), own.Commitments, n4.Commitments()}
	sh1, err := Sign(d.Shares[0], n1, msg, list)
	if err != nil {
		t.Fatal(err)
	}
	sh4, err := Sign(d.Shares[3], n4, msg, list)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := Aggregate(d.Public, msg, list, []SignatureShare{sh1, sh2, sh4})
	if err != nil {
		t.Fatal(err)
	}
	if !ed25519.Verify(d.Public.GroupPublicKey(), msg, sig) {
		t.Fatal("signature does not verify")
	}
	if _, err := s.SignAmong(own.Handle, msg, []SigningCommitments{n1.Commitments(), n4.Commitments()}); !errors.Is(err, ErrNonceUsed) {
		t.Fatalf("second use: %v, want ErrNonceUsed", err)
	}
	if _, err := s.SignAmong(NonceHandle(1<<40|7), msg, []SigningCommitments{n1.Commitments(), n4.Commitments()}); !errors.Is(err, ErrNonceUsed) {
		t.Fatalf("unknown handle: %v, want ErrNonceUsed", err)
	}
}

// TestSignChecksForDirectCallers: frost.Sign, which the nonce store no
// longer goes through, still checks the list itself.
func TestSignChecksForDirectCallers(t *testing.T) {
	d, err := Split(scalarFromUint(99), 2, 3, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	msg := []byte("direct")
	for _, tc := range []struct {
		name string
		list func(own, other SigningCommitments) []SigningCommitments
	}{
		{"unsorted", func(own, other SigningCommitments) []SigningCommitments { return []SigningCommitments{other, own} }},
		{"repeated", func(own, other SigningCommitments) []SigningCommitments { return []SigningCommitments{own, own} }},
		{"own missing", func(own, other SigningCommitments) []SigningCommitments {
			third, _ := Commit(d.Shares[2], rand.Reader)
			return []SigningCommitments{other, third.Commitments()}
		}},
		{"own replaced", func(own, other SigningCommitments) []SigningCommitments {
			again, _ := Commit(d.Shares[0], rand.Reader)
			return []SigningCommitments{again.Commitments(), other}
		}},
		{"below the threshold", func(own, other SigningCommitments) []SigningCommitments { return []SigningCommitments{own} }},
	} {
		n1, _ := Commit(d.Shares[0], rand.Reader)
		n2, _ := Commit(d.Shares[1], rand.Reader)
		if _, err := Sign(d.Shares[0], n1, msg, tc.list(n1.Commitments(), n2.Commitments())); !errors.Is(err, signer.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", tc.name, err)
		}
		if !n1.wiped() {
			t.Errorf("%s: nonces not wiped after a refused Sign", tc.name)
		}
	}
}
