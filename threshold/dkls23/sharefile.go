package dkls23

import "fmt"

// A Share's encoding, for the caller to keep (encrypted: it is the
// party's secret): version, kind, ID, T, N, then p(ID), the public key,
// the N public shares, and for each other party j in order Alice's setup
// toward j (Δ and the chosen seeds) and Bob's (both seeds of each base
// OT). Its length depends on N alone.
const kindShare = 6

// shareLen is the encoded length of a share of an n-party key.
func shareLen(n int) int {
	return 6 + scalarLen + pointLen + n*pointLen + (n-1)*(kappa/8+3*kappa*32)
}

// MarshalBinary encodes the share; UnmarshalShare reads it back.
func (s *Share) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, shareLen(s.N))
	b = append(b, wireVersion, kindShare, byte(s.ID), byte(s.T), byte(s.N), 0)
	b = putScalar(b, &s.x)
	b = append(b, s.public.bytes()...)
	for _, p := range s.publicShares {
		b = append(b, p.bytes()...)
	}
	for j := 1; j <= s.N; j++ {
		if j == s.ID {
			continue
		}
		a, o := s.alice[j], s.bob[j]
		if a == nil || o == nil {
			return nil, &UsageError{Reason: fmt.Sprintf("share has no OT setup with party %d", j)}
		}
		b = append(b, a.Delta[:]...)
		for i := range kappa {
			b = append(b, a.Seeds[i][:]...)
		}
		for i := range kappa {
			b = append(b, o.Seeds0[i][:]...)
			b = append(b, o.Seeds1[i][:]...)
		}
	}
	return b, nil
}

// UnmarshalShare decodes a share made by MarshalBinary and checks what it
// can without the other parties: the parameters, that p(ID)·G is the
// party's public share, and that the public shares lie on one polynomial
// of degree T−1 whose value at 0 is the public key. Anything else is an
// *EncodingError.
func UnmarshalShare(b []byte) (*Share, error) {
	if len(b) < 6 || b[0] != wireVersion || b[1] != kindShare || b[5] != 0 {
		return nil, &EncodingError{Reason: "not a dkls23 share"}
	}
	id, t, n := int(b[2]), int(b[3]), int(b[4])
	if checkParties(id, t, n) != nil {
		return nil, &EncodingError{Reason: fmt.Sprintf("share of party %d, %d of %d", id, t, n)}
	}
	if len(b) != shareLen(n) {
		return nil, &EncodingError{Reason: fmt.Sprintf("share of %d bytes, want %d", len(b), shareLen(n))}
	}
	r := &reader{b: b[6:]}
	s := &Share{ID: id, T: t, N: n, alice: map[int]*otSenderSetup{}, bob: map[int]*otReceiverSetup{}}
	s.x = r.scalar("share")
	s.public = r.point("public key")
	for range n {
		s.publicShares = append(s.publicShares, r.point("public share"))
	}
	for j := 1; j <= n; j++ {
		if j == id {
			continue
		}
		a, o := &otSenderSetup{}, &otReceiverSetup{}
		copy(a.Delta[:], r.bytes(kappa/8))
		for i := range kappa {
			copy(a.Seeds[i][:], r.bytes(32))
		}
		for i := range kappa {
			copy(o.Seeds0[i][:], r.bytes(32))
			copy(o.Seeds1[i][:], r.bytes(32))
		}
		s.alice[j], s.bob[j] = a, o
	}
	if r.err != nil {
		return nil, r.err
	}
	return s, s.checkPublic()
}

// checkPublic checks the share against the public shares and the public
// shares against the public key.
func (s *Share) checkPublic() error {
	if !baseMul(&s.x).equal(s.publicShares[s.ID-1]) {
		return &EncodingError{Reason: "the share does not match its public share"}
	}
	base := make([]int, s.T)
	for i := range base {
		base[i] = i + 1
	}
	// Interpolate the first T public shares at 0 and at every other index.
	at := func(x int) Point {
		var acc Point
		for k, i := range base {
			l := lagrangeAt(i, base, x)
			term := s.publicShares[i-1].mul(&l)
			if k == 0 {
				acc = term
			} else {
				acc = acc.add(term)
			}
		}
		return acc
	}
	if !at(0).equal(s.public) {
		return &EncodingError{Reason: "the public shares do not interpolate to the public key"}
	}
	for x := s.T + 1; x <= s.N; x++ {
		if !at(x).equal(s.publicShares[x-1]) {
			return &EncodingError{Reason: fmt.Sprintf("public share %d is off the polynomial", x)}
		}
	}
	return nil
}
