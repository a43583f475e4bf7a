package dkls23

import "fmt"

// Messages: each starts with a version byte, a kind byte, and the sender's
// and recipient's indices, followed by fixed-size fields (33-byte
// compressed points, 32-byte scalars below q), so that every message of a
// kind has one length, known before it is read (a keygen round-2 message's
// depends on t ≤ MaxParties). A decoder refuses any other length, any
// point off the curve or at infinity, and any scalar ≥ q, with an
// *EncodingError.
const wireVersion = 1

// Message kinds.
const (
	kindKeygen1 = 1 + iota
	kindKeygen2
	kindPresign1
	kindPresign2
	kindSignShare
)

// Fixed sizes.
const (
	headerLen       = 4
	baseOTSendLen   = pointLen + pointLen + scalarLen
	kosMsgLen       = 32 + colsLen + 16 + 32
	voleAliceLen    = 32 + xi*corrLen*scalarLen + scalarLen + 32 + ell*scalarLen
	keygen1Len      = headerLen + 32 + baseOTSendLen
	presign1Len     = headerLen + 32 + kosMsgLen
	presign2Len     = headerLen + 32 + pointLen + 32 + 2*pointLen + scalarLen + voleAliceLen
	signShareLen    = headerLen + pointLen + 2*scalarLen
	keygen2FixedLen = headerLen + 32 + 32 + pointLen + scalarLen + scalarLen + kappa*pointLen
)

// header starts a message.
func header(kind, from, to int, size int) []byte {
	b := make([]byte, 0, size)
	return append(b, wireVersion, byte(kind), byte(from), byte(to))
}

// reader reads fixed-size fields; the first failure sticks.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = &EncodingError{Reason: what}
	}
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil || len(r.b) < n {
		r.fail("short message")
		return make([]byte, n)
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) fixed32() (out [32]byte) {
	copy(out[:], r.bytes(32))
	return out
}

func (r *reader) point(what string) Point {
	p, ok := decodePoint(r.bytes(pointLen))
	if !ok {
		r.fail(what + ": not a point of secp256k1")
	}
	return p
}

func (r *reader) scalar(what string) Scalar {
	s, ok := decodeScalar(r.bytes(scalarLen))
	if !ok {
		r.fail(what + ": scalar out of range")
	}
	return s
}

// open checks a message's length, version and kind, and returns a reader
// past the header with the sender and recipient.
func open(b []byte, kind, size int) (*reader, int, int, error) {
	if len(b) != size {
		return nil, 0, 0, &EncodingError{Reason: fmt.Sprintf("message of kind %d: %d bytes, want %d", kind, len(b), size)}
	}
	if b[0] != wireVersion || int(b[1]) != kind {
		return nil, 0, 0, &EncodingError{Reason: fmt.Sprintf("version %d kind %d, want version %d kind %d", b[0], b[1], wireVersion, kind)}
	}
	from, to := int(b[2]), int(b[3])
	if from < 1 || from > MaxParties || to > MaxParties || from == to {
		return nil, 0, 0, &EncodingError{Reason: fmt.Sprintf("bad party indices %d → %d", from, to)}
	}
	return &reader{b: b[headerLen:]}, from, to, nil
}

// keygenMsg1 is key generation's round-1 message.
type keygenMsg1 struct {
	From, To int
	Commit   [32]byte
	OT       baseOTSenderMsg
}

func (m *keygenMsg1) encode() []byte {
	b := header(kindKeygen1, m.From, m.To, keygen1Len)
	b = append(b, m.Commit[:]...)
	b = append(b, m.OT.A.bytes()...)
	b = append(b, m.OT.Proof.R.bytes()...)
	return putScalar(b, &m.OT.Proof.Z)
}

func decodeKeygenMsg1(b []byte) (*keygenMsg1, error) {
	r, from, to, err := open(b, kindKeygen1, keygen1Len)
	if err != nil {
		return nil, err
	}
	m := &keygenMsg1{From: from, To: to, Commit: r.fixed32()}
	m.OT.A = r.point("base OT A")
	m.OT.Proof.R = r.point("proof R")
	m.OT.Proof.Z = r.scalar("proof z")
	return m, r.err
}

// keygenMsg2 is key generation's round-2 message.
type keygenMsg2 struct {
	From, To int
	Echo     [32]byte
	Salt     [32]byte
	Coeffs   []Point // t of them
	PoK      schnorrProof
	Share    Scalar
	OT       baseOTReceiverMsg
}

func keygen2Len(t int) int { return keygen2FixedLen + t*pointLen }

func (m *keygenMsg2) encode() []byte {
	b := header(kindKeygen2, m.From, m.To, keygen2Len(len(m.Coeffs)))
	b = append(b, m.Echo[:]...)
	b = append(b, m.Salt[:]...)
	for _, c := range m.Coeffs {
		b = append(b, c.bytes()...)
	}
	b = append(b, m.PoK.R.bytes()...)
	b = putScalar(b, &m.PoK.Z)
	b = putScalar(b, &m.Share)
	for i := range kappa {
		b = append(b, m.OT.B[i].bytes()...)
	}
	return b
}

// decodeKeygenMsg2 decodes a round-2 message of a t-of-n key.
func decodeKeygenMsg2(b []byte, t int) (*keygenMsg2, error) {
	if t < 1 || t > MaxParties {
		return nil, &EncodingError{Reason: "threshold out of range"}
	}
	r, from, to, err := open(b, kindKeygen2, keygen2Len(t))
	if err != nil {
		return nil, err
	}
	m := &keygenMsg2{From: from, To: to, Echo: r.fixed32(), Salt: r.fixed32()}
	for range t {
		m.Coeffs = append(m.Coeffs, r.point("coefficient commitment"))
	}
	m.PoK.R = r.point("proof R")
	m.PoK.Z = r.scalar("proof z")
	m.Share = r.scalar("share")
	for i := range kappa {
		m.OT.B[i] = r.point("base OT B")
	}
	return m, r.err
}

// presignMsg1 is presigning's round-1 message (DKLS23 Protocol 3.6, round
// 1): the commitment to R_i and Bob's OT-extension message.
type presignMsg1 struct {
	From, To int
	Commit   [32]byte
	KOS      kosMsg
}

func (m *presignMsg1) encode() []byte {
	b := header(kindPresign1, m.From, m.To, presign1Len)
	b = append(b, m.Commit[:]...)
	b = append(b, m.KOS.Nonce[:]...)
	b = append(b, m.KOS.U[:]...)
	b = append(b, m.KOS.XTilde[:]...)
	return append(b, m.KOS.TTilde[:]...)
}

func decodePresignMsg1(b []byte) (*presignMsg1, error) {
	r, from, to, err := open(b, kindPresign1, presign1Len)
	if err != nil {
		return nil, err
	}
	m := &presignMsg1{From: from, To: to, Commit: r.fixed32()}
	m.KOS.Nonce = r.fixed32()
	copy(m.KOS.U[:], r.bytes(colsLen))
	copy(m.KOS.XTilde[:], r.bytes(16))
	m.KOS.TTilde = r.fixed32()
	return m, r.err
}

// presignMsg2 is presigning's round-2 message (Protocol 3.6, round 2): the
// echo of the round-1 commitments, the decommitment of R_i, the
// consistency values Γ^u = c^u·G and Γ^v = c^v·G, ψ = φ_i − χ, and
// Alice's multiplication message.
type presignMsg2 struct {
	From, To       int
	Echo           [32]byte
	R              Point
	Salt           [32]byte
	GammaU, GammaV Point
	Psi            Scalar
	VOLE           voleAliceMsg
}

func (m *presignMsg2) encode() []byte {
	b := header(kindPresign2, m.From, m.To, presign2Len)
	b = append(b, m.Echo[:]...)
	b = append(b, m.R.bytes()...)
	b = append(b, m.Salt[:]...)
	b = append(b, m.GammaU.bytes()...)
	b = append(b, m.GammaV.bytes()...)
	b = putScalar(b, &m.Psi)
	v := &m.VOLE
	b = append(b, v.Nonce[:]...)
	for j := range xi {
		for k := range corrLen {
			b = putScalar(b, &v.Tau[j][k])
		}
	}
	b = putScalar(b, &v.U)
	b = append(b, v.Digest[:]...)
	for k := range ell {
		b = putScalar(b, &v.Gamma[k])
	}
	return b
}

func decodePresignMsg2(b []byte) (*presignMsg2, error) {
	r, from, to, err := open(b, kindPresign2, presign2Len)
	if err != nil {
		return nil, err
	}
	m := &presignMsg2{From: from, To: to, Echo: r.fixed32()}
	m.R = r.point("R_i")
	m.Salt = r.fixed32()
	m.GammaU = r.point("Γ^u")
	m.GammaV = r.point("Γ^v")
	m.Psi = r.scalar("ψ")
	v := &m.VOLE
	v.Nonce = r.fixed32()
	for j := range xi {
		for k := range corrLen {
			v.Tau[j][k] = r.scalar("τ")
		}
	}
	v.U = r.scalar("u")
	v.Digest = r.fixed32()
	for k := range ell {
		v.Gamma[k] = r.scalar("γ")
	}
	return m, r.err
}

// MarshalBinary encodes the online round's message (to 0: it goes to
// whoever combines).
func (s *SignShare) MarshalBinary() ([]byte, error) {
	if s.From < 1 || s.From > MaxParties {
		return nil, &UsageError{Reason: "sign share of no party"}
	}
	b := header(kindSignShare, s.From, 0, signShareLen)
	b = append(b, s.R.bytes()...)
	b = putScalar(b, &s.U)
	return putScalar(b, &s.W), nil
}

// UnmarshalSignShare decodes a message made by MarshalBinary.
func UnmarshalSignShare(b []byte) (*SignShare, error) {
	r, from, to, err := open(b, kindSignShare, signShareLen)
	if err != nil {
		return nil, err
	}
	if to != 0 {
		return nil, &EncodingError{Reason: "sign share addressed to a party"}
	}
	s := &SignShare{From: from}
	s.R = r.point("R")
	s.U = r.scalar("u")
	s.W = r.scalar("w")
	return s, r.err
}
