package dkls23

import (
	"crypto/subtle"
	"fmt"
	"io"
	"slices"
	"sync/atomic"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
)

// Signing: DKLS23 Protocol 3.6, for a set of t parties. Each party
// i draws an instance key r_i (its share of the nonce, R = Σ r_i·G) and an
// inversion mask φ_i, and with each other party j runs two random VOLEs
// (Functionality 3.5): one in which i is Alice with input (r_i, sk_i)
// and j is Bob with random input χ_{j,i}, and one the other way round. Bob
// later corrects his random input to his φ by sending ψ = φ − χ. The
// parties end with additive shares u_i of r·φ and v_i of sk·φ; the
// signature is s = Σ w_i / Σ u_i with w_i = H(m)·φ_i + r_x·v_i, since
// (H(m)·φ + r_x·sk·φ)/(r·φ) = (H(m) + r_x·sk)/r.
//
//	round 1 (presign): i → j  commitment to R_i; Bob's OT-extension message
//	round 2 (presign): i → j  R_i and its opening; Γ^u = c^u·G, Γ^v = c^v·G;
//	                          ψ_{i,j} = φ_i − χ_{i,j}; Alice's multiplication message
//	round 3 (online):  i → *  (R, u_i, w_i)
//
// Rounds 1 and 2 do not depend on the message: together they make a
// presignature; only round 3 needs the message. After round 2 each party j checks,
// for each i, that R_i opens i's commitment and that the multiplication's
// outputs are consistent with R_i and i's public key share pk_i:
//
//	χ_{j,i}·R_i  = Γ^u_{i,j} + d^u_{j,i}·G
//	χ_{j,i}·pk_i = Γ^v_{i,j} + d^v_{j,i}·G
//
// where d are j's outputs as Bob. (Implementers of the paper report, with
// the authors' confirmation, a typo in the printed second check; the
// checks above are the ones the algebra requires.) A
// failure names i. The last round's shares cannot be checked one by one:
// the combined signature is verified, and a failure aborts without naming
// a party.
//
// Protocol 3.6 also re-randomises the additive key shares with shares of
// zero drawn between the parties at each signing; this implementation uses
// λ_i·p(i) directly and does not. The package documentation says so.

// Presign is one party's state in a presigning run.
type Presign struct {
	share   *Share
	sid     []byte
	parties []int
	rand    io.Reader
	r, phi  Scalar
	sk      Scalar
	R       Point
	salt    [32]byte
	commit  [32]byte
	commits map[int][32]byte
	bobs    map[int]*voleBob
	round2  bool
	c       map[int][ell]Scalar // outputs as Alice
	done    bool
}

// commitR commits party id to R_i.
func commitR(sid []byte, id int, R Point, salt *[32]byte) [32]byte {
	return newTranscript("presign-commit").add(sid).addUint(uint64(id)).add(R.bytes()).add(salt[:]).sum()
}

// voleSID names the multiplication with Alice a and Bob b in run sid.
func voleSID(sid []byte, a, b int) []byte {
	d := newTranscript("presign-vole").add(sid).addUint(uint64(a)).addUint(uint64(b)).sum()
	return d[:]
}

// NewPresign starts a presigning run of share's party with the signing
// set parties (exactly share.T indices, this party's among them). sid
// names the run and must be the same at every party; the multiplication's
// freshness does not depend on it (see voleBob), but its commitments are
// bound to it. It returns the run and its round-1 messages, by recipient.
func NewPresign(share *Share, sid []byte, parties []int, rand io.Reader) (*Presign, map[int][]byte, error) {
	set := slices.Clone(parties)
	slices.Sort(set)
	if len(slices.Compact(set)) != share.T || !slices.Contains(set, share.ID) || set[0] < 1 || set[len(set)-1] > share.N {
		return nil, nil, &UsageError{Reason: fmt.Sprintf("signing set %v: want %d distinct parties of 1 … %d including %d", parties, share.T, share.N, share.ID)}
	}
	p := &Presign{share: share, sid: slices.Clone(sid), parties: set, rand: rand,
		commits: map[int][32]byte{}, bobs: map[int]*voleBob{}, c: map[int][ell]Scalar{}}
	var err error
	if p.r, err = randomScalar(rand); err != nil {
		return nil, nil, err
	}
	if p.phi, err = randomScalar(rand); err != nil {
		return nil, nil, err
	}
	if _, err := io.ReadFull(rand, p.salt[:]); err != nil {
		return nil, nil, err
	}
	p.R = baseMul(&p.r)
	p.commit = commitR(p.sid, share.ID, p.R, &p.salt)
	l := lagrange(share.ID, set)
	p.sk.Mul2(&l, &share.x)
	out := map[int][]byte{}
	for _, j := range p.others() {
		bob, m, err := voleBobStart(share.bob[j], voleSID(p.sid, j, share.ID), rand)
		if err != nil {
			return nil, nil, err
		}
		p.bobs[j] = bob
		out[j] = (&presignMsg1{From: share.ID, To: j, Commit: p.commit, KOS: *m}).encode()
	}
	return p, out, nil
}

// others returns the signing set without this party.
func (p *Presign) others() []int {
	var out []int
	for _, j := range p.parties {
		if j != p.share.ID {
			out = append(out, j)
		}
	}
	return out
}

// echo digests every party's round-1 commitment.
func (p *Presign) echo() [32]byte {
	t := newTranscript("presign-echo").add(p.sid)
	for _, j := range p.parties {
		c := p.commits[j]
		t.add(c[:])
	}
	return t.sum()
}

// Round2 takes the other parties' round-1 messages (by sender) and returns
// the round-2 messages.
func (p *Presign) Round2(in map[int][]byte) (map[int][]byte, error) {
	if p.round2 {
		return nil, &UsageError{Reason: "presign round 2 already run"}
	}
	p.round2 = true
	id := p.share.ID
	msgs := map[int]*presignMsg1{}
	for _, j := range p.others() {
		m, err := decodePresignMsg1(in[j])
		if err != nil {
			return nil, malformed(j, err)
		}
		if m.From != j || m.To != id {
			return nil, abort(j, "presign round 1: message addressed from %d to %d", m.From, m.To)
		}
		msgs[j] = m
		p.commits[j] = m.Commit
	}
	p.commits[id] = p.commit
	echo := p.echo()
	out := map[int][]byte{}
	for _, j := range p.others() {
		vm, c, err := voleAlice(p.share.alice[j], j, voleSID(p.sid, id, j), [ell]Scalar{p.r, p.sk}, &msgs[j].KOS, p.rand)
		if err != nil {
			return nil, err
		}
		p.c[j] = c
		var psi Scalar
		psi.NegateVal(&p.bobs[j].b).Add(&p.phi)
		m := &presignMsg2{From: id, To: j, Echo: echo, R: p.R, Salt: p.salt,
			GammaU: baseMul(&c[0]), GammaV: baseMul(&c[1]), Psi: psi, VOLE: *vm}
		out[j] = m.encode()
	}
	return out, nil
}

// Finish takes the other parties' round-2 messages and returns the
// presignature. A Presign finishes once.
func (p *Presign) Finish(in map[int][]byte) (*Presignature, error) {
	if p.done || !p.round2 {
		return nil, &UsageError{Reason: "presign run finished, or its round 2 not run"}
	}
	p.done = true
	id := p.share.ID
	echo := p.echo()
	u := *new(Scalar).Mul2(&p.r, &p.phi)
	v := *new(Scalar).Mul2(&p.sk, &p.phi)
	R := p.R
	for _, j := range p.others() {
		m, err := decodePresignMsg2(in[j])
		if err != nil {
			return nil, malformed(j, err)
		}
		d, err := p.checkMsg2(j, m, &echo)
		if err != nil {
			return nil, err
		}
		c := p.c[j]
		// u_i += c^u_{i,j} + r_i·ψ_{j,i} + d^u_{i,j}; likewise v with sk_i.
		var t Scalar
		u.Add(&c[0]).Add(&d[0]).Add(t.Mul2(&p.r, &m.Psi))
		v.Add(&c[1]).Add(&d[1]).Add(t.Mul2(&p.sk, &m.Psi))
		R = R.add(m.R)
	}
	if R.isIdentity() {
		return nil, abort(0, "the combined nonce is the identity")
	}
	ps := &Presignature{ID: id, R: R, u: u, v: v, phi: p.phi}
	p.r.Zero()
	p.phi.Zero()
	p.sk.Zero()
	return ps, nil
}

// checkMsg2 checks j's round-2 message (commitment, echo and the
// consistency of the multiplication with R_j and pk_j) and returns this
// party's outputs as Bob toward j.
func (p *Presign) checkMsg2(j int, m *presignMsg2, echo *[32]byte) ([ell]Scalar, error) {
	var d [ell]Scalar
	if m.From != j || m.To != p.share.ID {
		return d, abort(j, "presign round 2: message addressed from %d to %d", m.From, m.To)
	}
	if subtle.ConstantTimeCompare(m.Echo[:], echo[:]) != 1 {
		return d, abort(j, "presign: the round-1 commitments it saw differ from ours")
	}
	if commitR(p.sid, j, m.R, &m.Salt) != p.commits[j] {
		return d, abort(j, "presign: R_%d does not open its commitment", j)
	}
	bob := p.bobs[j]
	d, err := bob.finish(j, &m.VOLE)
	if err != nil {
		return d, err
	}
	l := lagrange(j, p.parties)
	pk := p.share.publicShares[j-1].mul(&l)
	if !m.R.mul(&bob.b).equal(m.GammaU.add(baseMul(&d[0]))) {
		return d, abort(j, "presign: the multiplication is inconsistent with R_%d", j)
	}
	if !pk.mul(&bob.b).equal(m.GammaV.add(baseMul(&d[1]))) {
		return d, abort(j, "presign: the multiplication is inconsistent with party %d's key share", j)
	}
	return d, nil
}

// Presignature is one party's result of presigning: the nonce R and its
// shares u_i of r·φ and v_i of sk·φ, and its mask φ_i. It signs one
// message, once; it is secret.
type Presignature struct {
	ID   int
	R    Point
	u, v Scalar
	phi  Scalar
	used atomic.Bool
}

// SignShare is one party's last-round message: R (so that the combiner
// need not hold a presignature), u_i and w_i.
type SignShare struct {
	From int
	R    Point
	U, W Scalar
}

// hashScalar returns a 32-byte message hash as a scalar, as ECDSA does
// (the hash's bits as an integer, reduced modulo q).
func hashScalar(hash []byte) (Scalar, error) {
	if len(hash) != 32 {
		return Scalar{}, &UsageError{Reason: fmt.Sprintf("message hash of %d bytes, want 32", len(hash))}
	}
	var b [32]byte
	copy(b[:], hash)
	var m Scalar
	m.SetBytes(&b)
	return m, nil
}

// rx returns R's x coordinate modulo q: the signature's r.
func rx(R Point) Scalar {
	x := R.p.X
	x.Normalize()
	b := x.Bytes()
	var s Scalar
	s.SetBytes(b)
	return s
}

// Sign is the online round (Protocol 3.6, round 3) for the 32-byte
// message hash: w_i = H(m)·φ_i + r_x·v_i. A presignature signs once; a
// second call is a *UsageError.
func (ps *Presignature) Sign(hash []byte) (*SignShare, error) {
	m, err := hashScalar(hash)
	if err != nil {
		return nil, err
	}
	if ps.used.Swap(true) {
		return nil, &UsageError{Reason: "presignature already used"}
	}
	r := rx(ps.R)
	var w, t Scalar
	w.Mul2(&m, &ps.phi).Add(t.Mul2(&r, &ps.v))
	out := &SignShare{From: ps.ID, R: ps.R, U: ps.u, W: w}
	ps.phi.Zero()
	ps.v.Zero()
	return out, nil
}

// Combine returns the low-S ECDSA signature (r, s) of hash under the
// compressed public key pub from every signing party's share, after
// checking it verifies. Shares with different R, a zero Σu, or a signature
// that does not verify abort.
func Combine(pub []byte, hash []byte, shares []*SignShare) (*ecdsa.Signature, error) {
	pk, err := secp256k1.ParsePubKey(pub)
	if err != nil {
		return nil, &UsageError{Reason: "public key: " + err.Error()}
	}
	if _, err := hashScalar(hash); err != nil {
		return nil, err
	}
	if len(shares) == 0 {
		return nil, &UsageError{Reason: "no shares"}
	}
	var u, w Scalar
	for _, s := range shares {
		if !s.R.equal(shares[0].R) {
			return nil, abort(s.From, "its share is for another nonce")
		}
		u.Add(&s.U)
		w.Add(&s.W)
	}
	if u.IsZero() {
		return nil, abort(0, "the shares of r·φ sum to zero")
	}
	s := *u.InverseNonConst().Mul(&w)
	if s.IsOverHalfOrder() {
		s.Negate()
	}
	r := rx(shares[0].R)
	sig := ecdsa.NewSignature(&r, &s)
	if r.IsZero() || s.IsZero() || !sig.Verify(hash, pk) {
		return nil, abort(0, "the combined signature does not verify")
	}
	return sig, nil
}
