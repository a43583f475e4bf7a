package dkls23

import (
	"io"
)

// kappa is the number of base oblivious transfers, and the computational
// security parameter of the OT extension (κ = 128 in KOS15).
const kappa = 128

// Base OT: the "simplest OT" of Chou and Orlandi (ePrint 2015/267), with a
// Schnorr proof that the sender knows the discrete logarithm of its A, as
// DKLs19 (ePrint 2019/523) uses for its base OTs; DKLS23 takes its
// multiplication, base OTs included, from DKLs19. It runs once
// per ordered pair of parties at key generation (128 transfers), never
// while signing.
//
// Roles are those of the OT extension that follows (KOS15): the
// extension's receiver (the multiplication's Bob) is the base OT's sender
// and learns both seeds of every transfer; the extension's sender (Alice)
// is the base OT's receiver and learns one seed of each, chosen by the bits
// of its secret Δ.

// baseOTSenderMsg is the base sender's only message: A = a·G and a proof
// of knowledge of a.
type baseOTSenderMsg struct {
	A     Point
	Proof schnorrProof
}

// baseOTReceiverMsg is the base receiver's only message: B_i = b_i·G +
// Δ_i·A for each transfer i.
type baseOTReceiverMsg struct {
	B [kappa]Point
}

// baseOTSender is the sender's secret between its message and the reply.
type baseOTSender struct {
	sid []byte
	a   Scalar
	A   Point
}

// schnorrProof proves knowledge of x with X = x·G (Schnorr, made
// non-interactive with Fiat–Shamir over the session id and X).
type schnorrProof struct {
	R Point
	Z Scalar
}

// proveDL returns a proof of knowledge of x for X = x·G bound to label.
func proveDL(label []byte, x *Scalar, X Point, rand io.Reader) (schnorrProof, error) {
	k, err := randomScalar(rand)
	if err != nil {
		return schnorrProof{}, err
	}
	R := baseMul(&k)
	c := newTranscript("dlog").add(label).add(X.bytes()).add(R.bytes()).scalar()
	var z Scalar
	z.Mul2(&c, x).Add(&k)
	return schnorrProof{R: R, Z: z}, nil
}

// verifyDL checks a proof made by proveDL.
func verifyDL(label []byte, X Point, p schnorrProof) bool {
	c := newTranscript("dlog").add(label).add(X.bytes()).add(p.R.bytes()).scalar()
	// z·G = R + c·X
	return baseMul(&p.Z).equal(p.R.add(X.mul(&c)))
}

// newBaseOTSender draws a and returns the sender's message.
func newBaseOTSender(sid []byte, rand io.Reader) (*baseOTSender, baseOTSenderMsg, error) {
	a, err := randomScalar(rand)
	if err != nil {
		return nil, baseOTSenderMsg{}, err
	}
	A := baseMul(&a)
	proof, err := proveDL(sid, &a, A, rand)
	if err != nil {
		return nil, baseOTSenderMsg{}, err
	}
	return &baseOTSender{sid: sid, a: a, A: A}, baseOTSenderMsg{A: A, Proof: proof}, nil
}

// baseOTKey derives transfer i's seed from the shared point.
func baseOTKey(sid []byte, i int, B, shared Point) [32]byte {
	return newTranscript("base-ot").add(sid).addUint(uint64(i)).add(B.bytes()).add(shared.bytes()).sum()
}

// baseOTReceive answers the sender's message with choice bits delta and
// returns the chosen seeds. from is the sender's party index, blamed if its
// proof fails.
func baseOTReceive(sid []byte, from int, msg baseOTSenderMsg, delta [kappa / 8]byte, rand io.Reader) (baseOTReceiverMsg, [kappa][32]byte, error) {
	var out baseOTReceiverMsg
	var seeds [kappa][32]byte
	if !verifyDL(sid, msg.A, msg.Proof) {
		return out, seeds, abort(from, "base OT: the proof of knowledge of A does not verify")
	}
	for i := range kappa {
		b, err := randomScalar(rand)
		if err != nil {
			return out, seeds, err
		}
		B := baseMul(&b)
		if bit(delta[:], i) == 1 {
			B = B.add(msg.A)
		}
		out.B[i] = B
		seeds[i] = baseOTKey(sid, i, B, msg.A.mul(&b))
	}
	return out, seeds, nil
}

// finish returns both seeds of every transfer. from is the receiver's
// party index, blamed for a B that is the identity or equals A (which
// would make a seed known to anyone).
func (s *baseOTSender) finish(from int, msg baseOTReceiverMsg) (k0, k1 [kappa][32]byte, err error) {
	negA := s.A.neg()
	for i := range kappa {
		B := msg.B[i]
		if B.isIdentity() || B.equal(s.A) {
			return k0, k1, abort(from, "base OT: degenerate B in transfer %d", i)
		}
		k0[i] = baseOTKey(s.sid, i, B, B.mul(&s.a))
		k1[i] = baseOTKey(s.sid, i, B, B.add(negA).mul(&s.a))
	}
	return k0, k1, nil
}

// bit returns bit i of b, least significant bit of b[0] first.
func bit(b []byte, i int) byte { return (b[i/8] >> (i % 8)) & 1 }
