package dkls23

import (
	"crypto/sha256"
	"crypto/subtle"
	"io"
	"sync"
)

// The two-party multiplication: DKLS23 defines the random vector OLE
// functionality F_RVOLE (Functionality 3.5) with which Protocol 3.6 signs,
// and suggests realising it with the OT-based multiplication of DKLs19
// (Protocol 1, ePrint 2019/523) with Bob's input left random, which drops
// DKLs19's encoding of Bob's input, in two messages (DKLs19 §5.1). Alice inputs a vector a of
// ell = 2 scalars (her instance key and key share); Bob's input is a random
// scalar b = ⟨g, β⟩ of his random bits β under the public gadget g; they
// end with c (Alice) and d (Bob), c + d = b·a.
//
// Alice masks her input with a random ã and proves with DKLs19's check
// that every correlated OT used the same ã: she adds one random scalar â
// to the correlation, Bob learns u = χ̃·ã + χ̂·â for challenges χ̃, χ̂ drawn
// from a hash of the transcript, and each transfer j must satisfy
// r_j + χ·t^B_j = β_j·u. Alice sends a digest of her r_1 … r_xi instead of
// the vector (Bob recomputes it from his side and compares digests, which
// under SHA-256's collision resistance is the same check with 13 KB fewer
// bytes). She then sends γ = a − ã, and Bob adds b·γ to his share.
const (
	// xi is the number of OTs per multiplication, κ_q + 2s with κ_q = 256
	// (the bits of q) and statistical parameter s = 80, as DKLs19 sets ξ.
	xi = 256 + 2*80
	// ell is the length of Alice's input vector: (r_i, sk_i).
	ell = 2
	// corrLen is the length of the OT correlation: ã and one mask â.
	corrLen = ell + 1
)

// gadget returns g: g_k = 2^k for k < 256, then fixed pseudorandom scalars
// (DKLs19's gadget vector).
var gadget = sync.OnceValue(func() *[xi]Scalar {
	var g [xi]Scalar
	var two Scalar
	two.SetInt(2)
	g[0].SetInt(1)
	for k := 1; k < 256; k++ {
		g[k].Mul2(&g[k-1], &two)
	}
	for k := 256; k < xi; k++ {
		g[k] = newTranscript("gadget").addUint(uint64(k)).scalar()
	}
	return &g
})

// voleAliceMsg is Alice's reply to Bob's OT-extension message: the
// correlated OT's corrections τ_j, the check's u and digest, and γ.
type voleAliceMsg struct {
	Nonce  [32]byte
	Tau    [xi][corrLen]Scalar
	U      Scalar
	Digest [32]byte
	Gamma  [ell]Scalar
}

// voleBob is Bob's state between his message and Alice's reply.
type voleBob struct {
	sid  []byte // with Bob's nonce
	beta [xi / 8]byte
	b    Scalar
	rows *[otBatch][2]uint64 // t_j
}

// Freshness: the extension's seeds are fixed at key generation, so each
// multiplication must expand them under a session id never used before.
// Bob's PRG is keyed with the caller's sid and a nonce of his own (sent in
// his message), and the pads H(t_j) with that and a nonce of Alice's (sent
// in hers), so that neither depends on the caller's sid being unique:
// reusing an expansion would reveal x ⊕ x' to Alice, and reusing pads
// would reveal the sum of two of Alice's masks to Bob.

// bobSID and padSID derive the two session ids.
func bobSID(sid []byte, nonce *[32]byte) []byte {
	d := newTranscript("vole-bob").add(sid).add(nonce[:]).sum()
	return d[:]
}

func padSID(bobSID []byte, nonce *[32]byte) [32]byte {
	return newTranscript("vole-pad").add(bobSID).add(nonce[:]).sum()
}

// voleBobStart draws Bob's bits and returns his state and his OT-extension
// message. His random input is the returned state's b.
func voleBobStart(setup *otReceiverSetup, sid []byte, rand io.Reader) (*voleBob, *kosMsg, error) {
	var nonce [32]byte
	if _, err := io.ReadFull(rand, nonce[:]); err != nil {
		return nil, nil, err
	}
	bob := &voleBob{sid: bobSID(sid, &nonce)}
	pad := make([]byte, kosPad/8)
	if _, err := io.ReadFull(rand, bob.beta[:]); err != nil {
		return nil, nil, err
	}
	if _, err := io.ReadFull(rand, pad); err != nil {
		return nil, nil, err
	}
	msg, rows := kosReceive(setup, bob.sid, bob.beta[:], pad)
	msg.Nonce = nonce
	bob.rows = rows
	g := gadget()
	for j := range xi {
		if bit(bob.beta[:], j) == 1 {
			bob.b.Add(&g[j])
		}
	}
	return bob, msg, nil
}

// voleChallenge returns χ̃ (ell scalars) and χ̂ for the check, from the
// session and Alice's corrections.
func voleChallenge(sid []byte, tau *[xi][corrLen]Scalar) [corrLen]Scalar {
	buf := make([]byte, 0, xi*corrLen*scalarLen)
	for j := range xi {
		for k := range corrLen {
			buf = putScalar(buf, &tau[j][k])
		}
	}
	t := newTranscript("vole-check").add(sid).add(buf)
	var chi [corrLen]Scalar
	for k := range corrLen {
		chi[k] = newTranscript("vole-check-chi").add(t.buf).addUint(uint64(k)).scalar()
	}
	return chi
}

// dot returns Σ χ_k·v_k.
func dot(chi, v *[corrLen]Scalar) Scalar {
	var acc, t Scalar
	for k := range corrLen {
		t.Mul2(&chi[k], &v[k])
		acc.Add(&t)
	}
	return acc
}

// voleAlice is Alice's only step: with input a, she answers Bob's message
// (blaming party from if its OT extension fails its check) and returns her
// message and her share c.
func voleAlice(setup *otSenderSetup, from int, sid []byte, a [ell]Scalar, msg *kosMsg, rand io.Reader) (*voleAliceMsg, [ell]Scalar, error) {
	var c [ell]Scalar
	bsid := bobSID(sid, &msg.Nonce)
	rows, err := kosSend(setup, from, bsid, msg)
	if err != nil {
		return nil, c, err
	}
	out := new(voleAliceMsg)
	if _, err := io.ReadFull(rand, out.Nonce[:]); err != nil {
		return nil, c, err
	}
	sd := padSID(bsid, &out.Nonce)
	var alpha [corrLen]Scalar // (ã, â)
	for k := range corrLen {
		if alpha[k], err = randomScalar(rand); err != nil {
			return nil, c, err
		}
	}
	tA := make([][corrLen]Scalar, xi)
	delta := deltaWords(&setup.Delta)
	g := gadget()
	for j := range xi {
		v0 := rowPads(&sd, j, rows[j])
		v1 := rowPads(&sd, j, [2]uint64{rows[j][0] ^ delta[0], rows[j][1] ^ delta[1]})
		for k := range corrLen {
			// τ = α + v0 − v1; Alice's share of β_j·α is −v0.
			out.Tau[j][k].NegateVal(&v1[k]).Add(&v0[k]).Add(&alpha[k])
			tA[j][k].NegateVal(&v0[k])
		}
		var t Scalar
		for k := range ell {
			t.Mul2(&g[j], &tA[j][k])
			c[k].Add(&t)
		}
	}
	chi := voleChallenge(sd[:], &out.Tau)
	out.U = dot(&chi, &alpha)
	h := sha256.New()
	for j := range xi {
		r := dot(&chi, &tA[j])
		b := r.Bytes()
		h.Write(b[:])
	}
	h.Sum(out.Digest[:0])
	for k := range ell {
		out.Gamma[k].NegateVal(&alpha[k]).Add(&a[k])
	}
	return out, c, nil
}

// finish checks Alice's reply (blaming party from) and returns Bob's
// share d, c + d = b·a.
func (bob *voleBob) finish(from int, m *voleAliceMsg) ([ell]Scalar, error) {
	var d [ell]Scalar
	sd := padSID(bob.sid, &m.Nonce)
	chi := voleChallenge(sd[:], &m.Tau)
	g := gadget()
	h := sha256.New()
	for j := range xi {
		tB := rowPads(&sd, j, bob.rows[j])
		set := bit(bob.beta[:], j) == 1
		if set {
			for k := range corrLen {
				tB[k].Add(&m.Tau[j][k])
			}
		}
		// r_j = β_j·u − χ·t^B_j
		r := dot(&chi, &tB)
		r.Negate()
		if set {
			r.Add(&m.U)
		}
		b := r.Bytes()
		h.Write(b[:])
		var t Scalar
		for k := range ell {
			t.Mul2(&g[j], &tB[k])
			d[k].Add(&t)
		}
	}
	var digest [32]byte
	h.Sum(digest[:0])
	if subtle.ConstantTimeCompare(digest[:], m.Digest[:]) != 1 {
		return d, abort(from, "multiplication: the correlation check fails")
	}
	for k := range ell {
		var t Scalar
		t.Mul2(&bob.b, &m.Gamma[k])
		d[k].Add(&t)
	}
	return d, nil
}
