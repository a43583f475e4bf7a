package dkls23

import (
	"crypto/subtle"
	"fmt"
	"io"
	"slices"
)

// MaxParties bounds n, so that every message has a bounded length.
const MaxParties = 16

// Key generation: DKLS23 signs with a Shamir-shared key from a DKG
// functionality and points to a three-round DKG (Protocol 9.1 of ePrint
// 2023/602) to realise it. This one is in the same family: Feldman-
// verifiable Shamir sharing, each party committing to its coefficient
// commitments before anyone opens, with a proof of knowledge of its
// secret. It is followed by the pairwise base OTs that set up every
// multiplication the parties will run, done once, at key generation, as
// DKLS23 prescribes for the OT setup of its multiplications.
//
// Two rounds, all messages point to point:
//
//  1. Party i draws a polynomial f_i of degree t−1 and sends every j a
//     commitment to its coefficient commitments C_i = (f_i,k·G) and to a
//     proof of knowledge of f_i(0), and, as Bob toward j's Alice, a base-OT
//     sender message.
//  2. Party i sends every j the digest of all round-1 commitments it
//     received (an echo, so that a party who sent different commitments to
//     different parties is caught), the decommitment, its share f_i(j), and
//     its base-OT receiver message for the OT that j began toward it.
//
// Each party then checks every decommitment, proof and share against the
// commitments, and ends with its Shamir share p(i) = Σ_k f_k(i) of sk, the
// public key pk = Σ_k C_k,0, every party's p(k)·G, and its OT seeds.
//
// Shares f_i(j) travel in round 2 and must go over a confidential,
// authenticated channel (mutual TLS in a deployment); this package
// encrypts nothing.

// Keygen is one party's state in key generation.
type Keygen struct {
	sid    []byte
	id     int
	t, n   int
	rand   io.Reader
	poly   []Scalar
	coeffs []Point
	pok    schnorrProof
	salt   [32]byte
	commit [32]byte

	commits map[int][32]byte
	baseOT  map[int]*baseOTSender    // toward j's Alice, i is Bob
	alice   map[int]*otSenderSetup   // i as Alice toward j
	bob     map[int]*otReceiverSetup // i as Bob toward j
	round   int                      // rounds run
}

// checkParties validates t, n and id.
func checkParties(id, t, n int) error {
	if n < 2 || n > MaxParties || t < 2 || t > n || id < 1 || id > n {
		return &UsageError{Reason: fmt.Sprintf("unsupported parameters: party %d, %d of %d", id, t, n)}
	}
	return nil
}

// NewKeygen starts key generation for party id (1 … n) of a t-of-n key.
// sid names the run; every party must use the same one, and a new one per
// run.
func NewKeygen(sid []byte, id, t, n int, rand io.Reader) (*Keygen, error) {
	if err := checkParties(id, t, n); err != nil {
		return nil, err
	}
	k := &Keygen{sid: slices.Clone(sid), id: id, t: t, n: n, rand: rand,
		commits: map[int][32]byte{}, baseOT: map[int]*baseOTSender{},
		alice: map[int]*otSenderSetup{}, bob: map[int]*otReceiverSetup{}}
	for range t {
		c, err := randomScalar(rand)
		if err != nil {
			return nil, err
		}
		k.poly = append(k.poly, c)
		k.coeffs = append(k.coeffs, baseMul(&c))
	}
	var err error
	if k.pok, err = proveDL(k.pokLabel(id), &k.poly[0], k.coeffs[0], rand); err != nil {
		return nil, err
	}
	if _, err := io.ReadFull(rand, k.salt[:]); err != nil {
		return nil, err
	}
	k.commit = keygenCommit(k.sid, id, k.coeffs, k.pok, &k.salt)
	return k, nil
}

// step moves to the next round if it is the one after want, once: each
// round runs once, in order, even after a failure.
func (k *Keygen) step(want int) error {
	if k.round != want {
		return &UsageError{Reason: fmt.Sprintf("keygen: round %d called after %d rounds", want+1, k.round)}
	}
	k.round++
	return nil
}

// pokLabel binds party j's proof of knowledge to the run.
func (k *Keygen) pokLabel(j int) []byte {
	d := newTranscript("keygen-pok").add(k.sid).addUint(uint64(j)).sum()
	return d[:]
}

// otSID names the base OTs between Alice a and Bob b.
func (k *Keygen) otSID(a, b int) []byte {
	d := newTranscript("keygen-ot").add(k.sid).addUint(uint64(a)).addUint(uint64(b)).sum()
	return d[:]
}

// keygenCommit is the round-1 commitment to C and the proof.
func keygenCommit(sid []byte, id int, coeffs []Point, pok schnorrProof, salt *[32]byte) [32]byte {
	t := newTranscript("keygen-commit").add(sid).addUint(uint64(id)).add(salt[:])
	for _, c := range coeffs {
		t.add(c.bytes())
	}
	return t.add(pok.R.bytes()).add(putScalar(nil, &pok.Z)).sum()
}

// others returns the indices 1 … n without k's own.
func (k *Keygen) others() []int {
	var out []int
	for j := 1; j <= k.n; j++ {
		if j != k.id {
			out = append(out, j)
		}
	}
	return out
}

// Round1 returns the round-1 message for every other party, by index.
func (k *Keygen) Round1() (map[int][]byte, error) {
	if err := k.step(0); err != nil {
		return nil, err
	}
	out := map[int][]byte{}
	for _, j := range k.others() {
		s, m, err := newBaseOTSender(k.otSID(j, k.id), k.rand)
		if err != nil {
			return nil, err
		}
		k.baseOT[j] = s
		out[j] = (&keygenMsg1{From: k.id, To: j, Commit: k.commit, OT: m}).encode()
	}
	return out, nil
}

// echo returns the digest of every party's round-1 commitment.
func (k *Keygen) echo() [32]byte {
	t := newTranscript("keygen-echo").add(k.sid)
	for j := 1; j <= k.n; j++ {
		c := k.commits[j]
		t.add(c[:])
	}
	return t.sum()
}

// eval returns f(x) for the coefficients c.
func eval(c []Scalar, x int) Scalar {
	var xs, acc Scalar
	xs.SetInt(uint32(x))
	for i := len(c) - 1; i >= 0; i-- {
		acc.Mul(&xs).Add(&c[i])
	}
	return acc
}

// evalPoints returns Σ_k x^k·C_k.
func evalPoints(c []Point, x int) Point {
	var xs Scalar
	xs.SetInt(uint32(x))
	acc := c[len(c)-1]
	for i := len(c) - 2; i >= 0; i-- {
		acc = acc.mul(&xs).add(c[i])
	}
	return acc
}

// Round2 takes every other party's round-1 message (by sender) and returns
// the round-2 messages.
func (k *Keygen) Round2(in map[int][]byte) (map[int][]byte, error) {
	if err := k.step(1); err != nil {
		return nil, err
	}
	msgs := map[int]*keygenMsg1{}
	for _, j := range k.others() {
		m, err := decodeKeygenMsg1(in[j])
		if err != nil {
			return nil, malformed(j, err)
		}
		if m.From != j || m.To != k.id {
			return nil, abort(j, "keygen round 1: message addressed from %d to %d", m.From, m.To)
		}
		msgs[j] = m
		k.commits[j] = m.Commit
	}
	k.commits[k.id] = k.commit
	echo := k.echo()
	out := map[int][]byte{}
	for _, j := range k.others() {
		setup := &otSenderSetup{}
		if _, err := io.ReadFull(k.rand, setup.Delta[:]); err != nil {
			return nil, err
		}
		reply, seeds, err := baseOTReceive(k.otSID(k.id, j), j, msgs[j].OT, setup.Delta, k.rand)
		if err != nil {
			return nil, err
		}
		setup.Seeds = seeds
		k.alice[j] = setup
		out[j] = (&keygenMsg2{From: k.id, To: j, Echo: echo, Salt: k.salt, Coeffs: k.coeffs,
			PoK: k.pok, Share: eval(k.poly, j), OT: reply}).encode()
	}
	return out, nil
}

// Finish takes every other party's round-2 message and returns this
// party's key share.
func (k *Keygen) Finish(in map[int][]byte) (*Share, error) {
	if err := k.step(2); err != nil {
		return nil, err
	}
	echo := k.echo()
	x := eval(k.poly, k.id)
	all := map[int][]Point{k.id: k.coeffs}
	for _, j := range k.others() {
		m, err := decodeKeygenMsg2(in[j], k.t)
		if err != nil {
			return nil, malformed(j, err)
		}
		if err := k.checkMsg2(j, m, &echo); err != nil {
			return nil, err
		}
		x.Add(&m.Share)
		all[j] = m.Coeffs
		k0, k1, err := k.baseOT[j].finish(j, m.OT)
		if err != nil {
			return nil, err
		}
		k.bob[j] = &otReceiverSetup{Seeds0: k0, Seeds1: k1}
	}
	return k.share(x, all), nil
}

// checkMsg2 checks j's round-2 message against its commitment.
func (k *Keygen) checkMsg2(j int, m *keygenMsg2, echo *[32]byte) error {
	if m.From != j || m.To != k.id {
		return abort(j, "keygen round 2: message addressed from %d to %d", m.From, m.To)
	}
	if subtle.ConstantTimeCompare(m.Echo[:], echo[:]) != 1 {
		return abort(j, "keygen: the round-1 commitments it saw differ from ours")
	}
	c := keygenCommit(k.sid, j, m.Coeffs, m.PoK, &m.Salt)
	if c != k.commits[j] {
		return abort(j, "keygen: the decommitment does not open its commitment")
	}
	if !verifyDL(k.pokLabel(j), m.Coeffs[0], m.PoK) {
		return abort(j, "keygen: the proof of knowledge of its secret does not verify")
	}
	if !baseMul(&m.Share).equal(evalPoints(m.Coeffs, k.id)) {
		return abort(j, "keygen: its share is inconsistent with its commitments")
	}
	return nil
}

// share assembles the key share from the sum x of the shares received and
// every party's coefficient commitments.
func (k *Keygen) share(x Scalar, all map[int][]Point) *Share {
	s := &Share{ID: k.id, T: k.t, N: k.n, x: x, alice: k.alice, bob: k.bob}
	s.public = all[1][0]
	for j := 2; j <= k.n; j++ {
		s.public = s.public.add(all[j][0])
	}
	for p := 1; p <= k.n; p++ {
		X := evalPoints(all[1], p)
		for j := 2; j <= k.n; j++ {
			X = X.add(evalPoints(all[j], p))
		}
		s.publicShares = append(s.publicShares, X)
	}
	return s
}

// Share is one party's key: its Shamir share p(ID) of the signing key, the
// group's public key and every party's public share, and the OT setup with
// every other party. It is secret.
type Share struct {
	ID, T, N     int
	x            Scalar
	public       Point
	publicShares []Point // p(k)·G at index k−1
	alice        map[int]*otSenderSetup
	bob          map[int]*otReceiverSetup
}

// PublicKey returns the group's public key, compressed (33 bytes).
func (s *Share) PublicKey() []byte { return s.public.bytes() }
