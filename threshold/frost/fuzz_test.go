package frost

import (
	"bytes"
	"crypto/rand"
	"testing"
)

// Every decoder of a wire element is fuzzed: it must not panic, and what
// it accepts must encode back to the same bytes.

func seedCorpus(f *testing.F) (*Dealt, *SigningNonces) {
	d, err := Split(scalarFromUint(77), 2, 3, rand.Reader)
	if err != nil {
		f.Fatal(err)
	}
	n, _ := Commit(d.Shares[0], rand.Reader)
	return d, n
}

func FuzzParseSigningCommitments(f *testing.F) {
	_, n := seedCorpus(f)
	b, _ := n.Commitments().AppendBinary(nil)
	f.Add(b)
	f.Add(make([]byte, SigningCommitmentsSize))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseSigningCommitments(b)
		if err != nil {
			return
		}
		out, err := c.AppendBinary(nil)
		if err != nil || !bytes.Equal(out, b) {
			t.Fatalf("accepted %x, re-encoded %x (%v)", b, out, err)
		}
	})
}

func FuzzParseSignatureShare(f *testing.F) {
	f.Add([]byte{0, 1, 5})
	f.Add(append([]byte{0, 2}, order[:]...))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseSignatureShare(b)
		if err != nil {
			return
		}
		out, _ := s.AppendBinary(nil)
		if !bytes.Equal(out, b) {
			t.Fatalf("accepted %x, re-encoded %x", b, out)
		}
	})
}

func FuzzParseDKGRound1(f *testing.F) {
	_, r1, err := NewDKGSession(2, 2, 3, []byte("fuzz"), rand.Reader)
	if err != nil {
		f.Fatal(err)
	}
	b, _ := r1.AppendBinary(nil)
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParseDKGRound1(b)
		if err != nil {
			return
		}
		out, err := p.AppendBinary(nil)
		if err != nil || !bytes.Equal(out, b) {
			t.Fatalf("accepted %x, re-encoded %x", b, out)
		}
		p.verifyProof(dkgContext(2, 3, []byte("fuzz"))) // must not panic on any decoded package
	})
}

func FuzzParseDKGRound2(f *testing.F) {
	f.Add(make([]byte, DKGRound2Size))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParseDKGRound2(b)
		if err != nil {
			return
		}
		out, _ := p.AppendBinary(nil)
		if !bytes.Equal(out, b) {
			t.Fatalf("accepted %x, re-encoded %x", b, out)
		}
	})
}

func FuzzParseVSSCommitment(f *testing.F) {
	d, _ := seedCorpus(f)
	b, _ := d.Commitment.AppendBinary(nil)
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseVSSCommitment(b)
		if err != nil {
			return
		}
		out, _ := c.AppendBinary(nil)
		if !bytes.Equal(out, b) {
			t.Fatalf("accepted %x, re-encoded %x", b, out)
		}
	})
}

func FuzzParseKeyPackage(f *testing.F) {
	d, _ := seedCorpus(f)
	b, _ := d.Shares[0].MarshalBinary()
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := ParseKeyPackage(b)
		if err != nil {
			return
		}
		out, _ := k.MarshalBinary()
		if !bytes.Equal(out, b) {
			t.Fatalf("accepted %x, re-encoded %x", b, out)
		}
	})
}

func FuzzParsePublicKeyPackage(f *testing.F) {
	d, _ := seedCorpus(f)
	b, _ := d.Public.MarshalBinary()
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParsePublicKeyPackage(b)
		if err != nil {
			return
		}
		out, _ := p.MarshalBinary()
		if !bytes.Equal(out, b) {
			t.Fatalf("accepted %x, re-encoded %x", b, out)
		}
	})
}
