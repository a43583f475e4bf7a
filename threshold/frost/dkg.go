package frost

import (
	"fmt"
	"io"
	"slices"

	"filippo.io/edwards25519"
)

// RFC 9591 leaves key generation without a trusted dealer out of scope and
// points to the FROST paper's DKG (Komlo and Goldberg, "FROST: Flexible
// Round-Optimized Schnorr Threshold Signatures", 2020, figure 1), which is
// what this file implements: Pedersen's DKG where each participant also
// proves knowledge of its constant term with a Schnorr proof, so that no
// participant can bias the group key by choosing its commitment after
// seeing the others (a rogue-key attack).
//
// Round 1: participant i draws a random polynomial f_i of degree t-1,
// publishes its VSS commitment C_i = (G·a_i0, …, G·a_i(t-1)) and a proof
// (R_i, μ_i) with k random, R_i = G·k, c_i = H(i, Φ, C_i0, R_i),
// μ_i = k + a_i0·c_i, where H is SHA-512 over contextString ‖ "dkg" ‖ the
// encodings, reduced modulo L, and Φ is the session context the paper
// binds in (its context string): t (uint16 BE), n (uint16 BE), the length
// of the ceremony identifier (1 byte) and the identifier (NewDKGSession), so that a
// round-1 package made for one key generation does not verify in another
// (another ceremony, threshold or size). Everyone checks every proof.
// Round 2: i sends f_i(j) to each j over a confidential, authenticated
// channel; j checks G·f_i(j) = Σ_k C_ik·j^k. j's share is Σ_i f_i(j) and
// the group key Σ_i C_i0.

// DKGRound1 is what a participant broadcasts in round 1.
type DKGRound1 struct {
	ID         Identifier
	Commitment VSSCommitment
	R          *edwards25519.Point
	Mu         *edwards25519.Scalar
}

// DKGRound2 is the secret share participant From sends to participant To
// in round 2. It must travel over a confidential, authenticated channel.
type DKGRound2 struct {
	From, To Identifier
	Share    *edwards25519.Scalar
}

// DKG is one participant's state across the rounds of the key generation.
// It is not safe for concurrent use.
type DKG struct {
	id    Identifier
	t, n  int
	phi   []byte // the session context bound into the proofs
	poly  []*edwards25519.Scalar
	own   *DKGRound1
	peers map[Identifier]*DKGRound1
}

// MaxCeremonyID is the longest ceremony identifier NewDKG takes.
const MaxCeremonyID = 255

// NewDKG starts participant id's part of a t-of-n key generation with no
// ceremony identifier: its proofs bind t and n only, so a round-1 package
// replayed from another t-of-n key generation with the same identifier
// would verify. Use NewDKGSession.
func NewDKG(id Identifier, t, n int, rand io.Reader) (*DKG, *DKGRound1, error) {
	return newDKG(id, t, n, nil, rand)
}

// NewDKGSession starts participant id's part of a t-of-n key generation
// and returns its round-1 broadcast. ceremony identifies this key
// generation (1 to MaxCeremonyID bytes, the same for every participant,
// never used for another: random bytes agreed beforehand, say); it is
// bound into the proofs of knowledge with t and n, so a round-1 package
// from another ceremony is refused.
func NewDKGSession(id Identifier, t, n int, ceremony []byte, rand io.Reader) (*DKG, *DKGRound1, error) {
	if len(ceremony) == 0 {
		return nil, nil, invalidArgument("an empty ceremony identifier")
	}
	return newDKG(id, t, n, ceremony, rand)
}

func newDKG(id Identifier, t, n int, ceremony []byte, rand io.Reader) (*DKG, *DKGRound1, error) {
	if err := checkThreshold(t, n); err != nil {
		return nil, nil, err
	}
	if id == 0 {
		return nil, nil, invalidArgument("identifier 0")
	}
	if len(ceremony) > MaxCeremonyID {
		return nil, nil, invalidArgument("a ceremony identifier of %d bytes, want at most %d", len(ceremony), MaxCeremonyID)
	}
	d := &DKG{id: id, t: t, n: n, phi: dkgContext(t, n, ceremony)}
	for range t {
		a, err := randomScalar(rand)
		if err != nil {
			return nil, nil, err
		}
		d.poly = append(d.poly, a)
	}
	k, err := nonZeroRandomScalar(rand)
	if err != nil {
		return nil, nil, err
	}
	defer wipeScalar(k)
	c := vssCommit(d.poly)
	r := new(edwards25519.Point).ScalarBaseMult(k)
	ch := hdkg(id.serialize(), d.phi, c[0].Bytes(), r.Bytes())
	mu := new(edwards25519.Scalar).MultiplyAdd(d.poly[0], ch, k)
	d.own = &DKGRound1{ID: id, Commitment: c, R: r, Mu: mu}
	return d, d.own, nil
}

// dkgContext encodes Φ: t, n and the ceremony identifier.
func dkgContext(t, n int, ceremony []byte) []byte {
	phi := []byte{byte(t >> 8), byte(t), byte(n >> 8), byte(n), byte(len(ceremony))}
	return append(phi, ceremony...)
}

// verifyProof checks a round-1 proof of knowledge made in the session phi.
func (p *DKGRound1) verifyProof(phi []byte) bool {
	ch := hdkg(p.ID.serialize(), phi, p.Commitment[0].Bytes(), p.R.Bytes())
	// R = G·μ − C_0·c
	neg := new(edwards25519.Scalar).Negate(ch)
	r := new(edwards25519.Point).VarTimeDoubleScalarBaseMult(neg, p.Commitment[0], p.Mu)
	return r.Equal(p.R) == 1
}

// Round2 takes the round-1 broadcasts of the other n-1 participants,
// checks their proofs of knowledge, and returns the secret shares to send,
// one per other participant. A bad proof gives a *DKGError naming its
// sender.
func (d *DKG) Round2(others []*DKGRound1) ([]*DKGRound2, error) {
	if d.poly == nil {
		return nil, invalidArgument("DKG round 2 called twice or after Finish")
	}
	if len(others) != d.n-1 {
		return nil, invalidArgument("%d round-1 packages, want %d (every other participant's)", len(others), d.n-1)
	}
	peers := map[Identifier]*DKGRound1{}
	for _, p := range others {
		switch {
		case p == nil || p.ID == 0 || p.R == nil || p.Mu == nil:
			return nil, invalidArgument("an incomplete round-1 package")
		case p.ID == d.id:
			return nil, invalidArgument("a round-1 package with this participant's own identifier %d", d.id)
		case peers[p.ID] != nil:
			return nil, invalidArgument("two round-1 packages from participant %d", p.ID)
		case len(p.Commitment) != d.t:
			return nil, &DKGError{Culprit: p.ID, Round: 1, Reason: fmt.Sprintf("a commitment of degree %d, want %d", len(p.Commitment)-1, d.t-1)}
		}
		if !p.verifyProof(d.phi) {
			return nil, &DKGError{Culprit: p.ID, Round: 1, Reason: "the proof of knowledge does not verify"}
		}
		peers[p.ID] = p
	}
	d.peers = peers
	var out []*DKGRound2
	for _, id := range sortedIDs(peers) {
		out = append(out, &DKGRound2{From: d.id, To: id, Share: polynomialEvaluate(id.scalar(), d.poly)})
	}
	return out, nil
}

func sortedIDs[V any](m map[Identifier]V) []Identifier {
	ids := make([]Identifier, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Finish takes the round-2 shares sent to this participant by every
// other, checks each against its sender's commitment, and returns the
// participant's key package and the group's public key package. A share
// that does not match gives a *DKGError naming its sender. Finish wipes
// the DKG's secrets.
func (d *DKG) Finish(received []*DKGRound2) (*KeyPackage, *PublicKeyPackage, error) {
	if d.peers == nil || d.poly == nil {
		return nil, nil, invalidArgument("DKG Finish before Round2 or twice")
	}
	if len(received) != len(d.peers) {
		return nil, nil, invalidArgument("%d round-2 shares, want %d", len(received), len(d.peers))
	}
	seen := map[Identifier]bool{}
	sk := polynomialEvaluate(d.id.scalar(), d.poly)
	for _, r := range received {
		if r == nil || r.Share == nil {
			wipeScalar(sk)
			return nil, nil, invalidArgument("an incomplete round-2 share")
		}
		p := d.peers[r.From]
		switch {
		case p == nil || seen[r.From]:
			wipeScalar(sk)
			return nil, nil, invalidArgument("a round-2 share from %d, who is not a participant or sent twice", r.From)
		case r.To != d.id:
			wipeScalar(sk)
			return nil, nil, &DKGError{Culprit: r.From, Round: 2, Reason: fmt.Sprintf("a share addressed to %d", r.To)}
		}
		if !p.Commitment.verifyShare(d.id, r.Share) {
			wipeScalar(sk)
			return nil, nil, &DKGError{Culprit: r.From, Round: 2, Reason: "the secret share does not match its commitment"}
		}
		seen[r.From] = true
		sk.Add(sk, r.Share)
	}
	// The group's commitment is the sum of everyone's.
	group := make(VSSCommitment, d.t)
	for j := range group {
		group[j] = new(edwards25519.Point).Set(d.own.Commitment[j])
		for _, p := range d.peers {
			group[j].Add(group[j], p.Commitment[j])
		}
	}
	ids := append(sortedIDs(d.peers), d.id)
	slices.Sort(ids)
	pub := publicKeyPackage(group, ids)
	for _, a := range d.poly {
		wipeScalar(a)
	}
	d.poly = nil
	kp := &KeyPackage{id: d.id, secret: sk, public: new(edwards25519.Point).ScalarBaseMult(sk), group: pub.group, groupEnc: pub.groupEnc, minSigners: d.t}
	if kp.public.Equal(pub.shares[d.id]) != 1 {
		// Cannot happen once every share matched its commitment.
		kp.Wipe()
		return nil, nil, fmt.Errorf("frost: DKG: own share does not match the group commitment")
	}
	return kp, pub, nil
}

// RunDKG runs a whole t-of-n key generation in process, for tests,
// benchmarks and ceremonies on one machine: participants 1 … n, every
// message checked as it would be over the network.
func RunDKG(t, n int, rand io.Reader) ([]*KeyPackage, *PublicKeyPackage, error) {
	if err := checkThreshold(t, n); err != nil {
		return nil, nil, err
	}
	ceremony := make([]byte, 32)
	if _, err := io.ReadFull(rand, ceremony); err != nil {
		return nil, nil, fmt.Errorf("frost: reading randomness: %w", err)
	}
	dkgs := make([]*DKG, n)
	r1 := make([]*DKGRound1, n)
	for i := range n {
		var err error
		if dkgs[i], r1[i], err = NewDKGSession(Identifier(i+1), t, n, ceremony, rand); err != nil {
			return nil, nil, err
		}
	}
	inbox := make([][]*DKGRound2, n)
	for i, d := range dkgs {
		others := slices.Concat(r1[:i], r1[i+1:])
		out, err := d.Round2(others)
		if err != nil {
			return nil, nil, err
		}
		for _, m := range out {
			inbox[m.To-1] = append(inbox[m.To-1], m)
		}
	}
	keys := make([]*KeyPackage, n)
	var pub *PublicKeyPackage
	for i, d := range dkgs {
		kp, p, err := d.Finish(inbox[i])
		if err != nil {
			return nil, nil, err
		}
		keys[i], pub = kp, p
	}
	return keys, pub, nil
}
