package frost

import (
	"crypto/ed25519"
	"crypto/sha512"
	"fmt"
	"io"
	"slices"

	"filippo.io/edwards25519"
	"github.com/signerkit/signerkit/signer"
)

// SigningCommitments are the two public nonce commitments a participant
// publishes in round one (the pair (hiding_nonce_commitment,
// binding_nonce_commitment) with its identifier).
//
// Commitments decoded by ParseSigningCommitments or made by a NonceStore
// carry the encodings of their elements, so that encoding them again (for
// the binding factors, or to send them) costs no field inversion. The
// encodings are used while Hiding and Binding hold the points they were
// made with; assign other points to the fields rather than changing those
// points in place.
type SigningCommitments struct {
	ID      Identifier
	Hiding  *edwards25519.Point
	Binding *edwards25519.Point

	enc *commitmentsEncoding // nil when not known
}

// commitmentsEncoding is the encoding of the points hiding and binding.
type commitmentsEncoding struct {
	hiding, binding *edwards25519.Point
	b               [2 * ElementSize]byte
}

// withEncoding returns c carrying enc, the encodings of its hiding and
// binding elements.
func withEncoding(c SigningCommitments, enc []byte) SigningCommitments {
	e := &commitmentsEncoding{hiding: c.Hiding, binding: c.Binding}
	copy(e.b[:], enc)
	c.enc = e
	return c
}

// encoding returns the encodings of c's hiding and binding elements (64
// bytes) if c carries them for its current points, or nil.
func (c SigningCommitments) encoding() []byte {
	if e := c.enc; e != nil && e.hiding == c.Hiding && e.binding == c.Binding && c.Hiding != nil && c.Binding != nil {
		return e.b[:]
	}
	return nil
}

// encodeCommitments makes the encodings of the commitments of ns, with
// one field inversion for all, and has them carry them.
func encodeCommitments(ns []*SigningNonces) {
	ps := make([]*edwards25519.Point, 0, 2*len(ns))
	for _, n := range ns {
		ps = append(ps, n.commitments.Hiding, n.commitments.Binding)
	}
	elems := appendEncodings(nil, ps...)
	encs := make([]commitmentsEncoding, len(ns)) // one allocation for the batch
	const pair = 2 * ElementSize
	for i, n := range ns {
		e := &encs[i]
		e.hiding, e.binding = n.commitments.Hiding, n.commitments.Binding
		copy(e.b[:], elems[i*pair:][:pair])
		n.commitments.enc = e
	}
}

// Equal reports whether c and o are the same commitments.
func (c SigningCommitments) Equal(o SigningCommitments) bool {
	return c.ID == o.ID && c.Hiding != nil && o.Hiding != nil && c.Binding != nil && o.Binding != nil &&
		c.Hiding.Equal(o.Hiding) == 1 && c.Binding.Equal(o.Binding) == 1
}

// SigningNonces are the secret nonces behind a participant's
// SigningCommitments. They must be used in at most one Sign (NonceStore
// keeps that promise across crashes) and are wiped by it.
type SigningNonces struct {
	hiding, binding *edwards25519.Scalar
	commitments     SigningCommitments
}

// Commitments returns the public commitments to the nonces.
func (n *SigningNonces) Commitments() SigningCommitments { return n.commitments }

// Wipe overwrites the nonces.
func (n *SigningNonces) Wipe() {
	wipeScalar(n.hiding)
	wipeScalar(n.binding)
}

func (n *SigningNonces) wiped() bool { return n.hiding == nil || isZero(n.hiding) && isZero(n.binding) }

// nonceGenerateEnc is nonce_generate of RFC 9591 section 4.1 with the 32
// random bytes and the secret's encoding given: H3(random || secret),
// hashed from one buffer on the stack (cleared after), for Commit, which
// computes two nonces with one secret.
func nonceGenerateEnc(random, secret []byte) *edwards25519.Scalar {
	const prefix = contextString + "nonce"
	if len(random) != 32 || len(secret) != ScalarSize {
		panic("frost: nonce_generate wants 32 random bytes and a scalar")
	}
	var in [len(prefix) + 32 + ScalarSize]byte
	defer clear(in[:])
	copy(in[:], prefix)
	copy(in[len(prefix):], random)
	copy(in[len(prefix)+32:], secret)
	d := sha512.Sum512(in[:])
	defer clear(d[:])
	s, err := new(edwards25519.Scalar).SetUniformBytes(d[:])
	if err != nil {
		panic("frost: SetUniformBytes refused 64 bytes")
	}
	return s
}

// Commit is round one, commit(sk_i): it draws a pair of nonces bound to the
// participant's secret share and returns them with their commitments.
func Commit(k *KeyPackage, rand io.Reader) (*SigningNonces, error) {
	var r [64]byte
	defer clear(r[:])
	if _, err := io.ReadFull(rand, r[:]); err != nil {
		return nil, fmt.Errorf("frost: reading randomness: %w", err)
	}
	return commitWith(k.id, k.secret, r[:32], r[32:]), nil
}

func commitWith(id Identifier, secret *edwards25519.Scalar, hidingRandom, bindingRandom []byte) *SigningNonces {
	enc := secret.Bytes()
	defer clear(enc)
	n := &SigningNonces{hiding: nonceGenerateEnc(hidingRandom, enc), binding: nonceGenerateEnc(bindingRandom, enc)}
	n.commitments = SigningCommitments{ID: id,
		Hiding:  new(edwards25519.Point).ScalarBaseMult(n.hiding),
		Binding: new(edwards25519.Point).ScalarBaseMult(n.binding)}
	return n
}

// checkCommitmentList checks that list is sorted by identifier without
// duplicates and has no nil or identity element (decoded elements never
// are; this guards values built in code).
func checkCommitmentList(list []SigningCommitments, minSigners int) error {
	if len(list) < minSigners {
		return invalidArgument("%d signing commitments, the threshold is %d", len(list), minSigners)
	}
	if len(list) > MaxParticipants {
		return invalidArgument("%d signing commitments", len(list))
	}
	id := edwards25519.NewIdentityPoint()
	for i, c := range list {
		if c.ID == 0 {
			return invalidArgument("signing commitments with identifier 0")
		}
		if i > 0 && list[i-1].ID >= c.ID {
			return invalidArgument("signing commitments not sorted by identifier or repeated (%d after %d)", c.ID, list[i-1].ID)
		}
		if c.Hiding == nil || c.Binding == nil || c.Hiding.Equal(id) == 1 || c.Binding.Equal(id) == 1 {
			return invalidArgument("signing commitments of participant %d hold the identity or nothing", c.ID)
		}
	}
	return nil
}

// SortCommitments sorts list by identifier, as every function here wants
// it.
func SortCommitments(list []SigningCommitments) {
	slices.SortFunc(list, func(a, b SigningCommitments) int { return int(a.ID) - int(b.ID) })
}

// encodeGroupCommitmentList is encode_group_commitment_list.
func encodeGroupCommitmentList(list []SigningCommitments) []byte {
	_, enc := encodeGroupAndList(nil, nil, list)
	return enc
}

// encodeGroupAndList returns the group key's encoding (if group is not
// nil) and encode_group_commitment_list(list). Encodings already at hand
// are used (groupEnc, when not nil, is group's; commitments may carry
// theirs), and the rest are computed with one field inversion for all
// (appendEncodings).
func encodeGroupAndList(group *edwards25519.Point, groupEnc []byte, list []SigningCommitments) ([]byte, []byte) {
	var ps []*edwards25519.Point
	if group != nil && groupEnc == nil {
		ps = append(ps, group)
	}
	for _, c := range list {
		if c.encoding() == nil {
			ps = append(ps, c.Hiding, c.Binding)
		}
	}
	var elems []byte
	if len(ps) > 0 {
		elems = appendEncodings(nil, ps...)
	}
	if group != nil && groupEnc == nil {
		groupEnc, elems = elems[:ElementSize:ElementSize], elems[ElementSize:]
	}
	const pair = 2 * ElementSize
	listEnc := make([]byte, 0, len(list)*(ScalarSize+pair))
	for _, c := range list {
		listEnc = append(listEnc, c.ID.serialize()...)
		if enc := c.encoding(); enc != nil {
			listEnc = append(listEnc, enc...)
		} else {
			listEnc = append(listEnc, elems[:pair]...)
			elems = elems[pair:]
		}
	}
	return groupEnc, listEnc
}

// session holds what every participant and the coordinator compute from
// one (group key, commitment list, message): the binding factors, the
// group commitment R and the challenge c.
type session struct {
	list      []SigningCommitments
	binding   []*edwards25519.Scalar // by position in list
	groupComm *edwards25519.Point
	commEnc   []byte // groupComm's encoding, R of the signature
	groupEnc  []byte // the group public key's encoding
	challenge *edwards25519.Scalar
}

// bindingFactorInputs returns the rho inputs of compute_binding_factors,
// one per entry of list.
func bindingFactorInputs(groupEnc []byte, list []SigningCommitments, listEnc, msg []byte) [][]byte {
	prefix := slices.Concat(groupEnc, h4(msg), h5(listEnc))
	inputs := make([][]byte, len(list))
	for i, c := range list {
		inputs[i] = slices.Concat(prefix, c.ID.serialize())
	}
	return inputs
}

func newSession(group *edwards25519.Point, list []SigningCommitments, msg []byte) *session {
	return newSessionEnc(group, nil, list, msg)
}

// newSessionEnc is newSession with groupEnc, group's encoding, when at
// hand (nil if not).
func newSessionEnc(group *edwards25519.Point, groupEnc []byte, list []SigningCommitments, msg []byte) *session {
	s := &session{list: list}
	// Every encoding costs a field inversion unless done together, and
	// none is computed where it is at hand.
	groupEnc, listEnc := encodeGroupAndList(group, groupEnc, list)
	for _, in := range bindingFactorInputs(groupEnc, list, listEnc, msg) {
		s.binding = append(s.binding, h1(in))
	}
	// compute_group_commitment: Σ D_i + [ρ_i]E_i, as [ρ_1]E_1 + … +
	// [ρ_n]E_n (one multi-scalar multiplication) plus D_1 + … + D_n
	// (additions: multiplying by 1 costs a table and a pass each).
	points := make([]*edwards25519.Point, 0, len(list))
	for _, c := range list {
		points = append(points, c.Binding)
	}
	s.groupComm = new(edwards25519.Point).VarTimeMultiScalarMult(s.binding, points)
	for _, c := range list {
		s.groupComm.Add(s.groupComm, c.Hiding)
	}
	s.commEnc = s.groupComm.Bytes()
	s.groupEnc = groupEnc
	s.challenge = h2(s.commEnc, groupEnc, msg)
	return s
}

func (s *session) index(id Identifier) int { return indexOf(s.list, id) }

// lambda is derive_interpolating_value(participant_list, id).
func (s *session) lambda(id Identifier) *edwards25519.Scalar {
	num, den := scalarFromUint(1), scalarFromUint(1)
	xi := id.scalar()
	for _, c := range s.list {
		if c.ID == id {
			continue
		}
		xj := c.ID.scalar()
		num.Multiply(num, xj)
		den.Multiply(den, new(edwards25519.Scalar).Subtract(xj, xi))
	}
	return num.Multiply(num, den.Invert(den))
}

// SignatureShare is a participant's round-two output.
type SignatureShare struct {
	ID Identifier
	Z  *edwards25519.Scalar
}

// Sign is round two, sign(): it checks that the participant's own
// commitments appear in list, computes its signature share over msg and
// wipes nonces, which must not be used again. list must be sorted by
// identifier (SortCommitments).
func Sign(k *KeyPackage, nonces *SigningNonces, msg []byte, list []SigningCommitments) (SignatureShare, error) {
	defer nonces.Wipe()
	i, err := checkSignList(k, nonces.commitments, list) // signChecked refuses used nonces
	if err != nil {
		return SignatureShare{}, err
	}
	return signChecked(k, nonces, msg, list, i)
}

// checkSignList checks the commitment list of a sign by participant k
// whose own commitments are own (checkCommitmentList, and own in it) and
// returns own's index in it.
func checkSignList(k *KeyPackage, own SigningCommitments, list []SigningCommitments) (int, error) {
	if err := checkCommitmentList(list, k.minSigners); err != nil {
		return -1, err
	}
	i := indexOf(list, k.id)
	if i < 0 || !list[i].Equal(own) {
		return -1, invalidArgument("participant %d's own commitments are not in the commitment list", k.id)
	}
	return i, nil
}

func indexOf(list []SigningCommitments, id Identifier) int {
	for i, c := range list {
		if c.ID == id {
			return i
		}
	}
	return -1
}

// signChecked is Sign once checkSignList has passed list, with i the
// index of nonces' commitments in it. The caller wipes nonces.
func signChecked(k *KeyPackage, nonces *SigningNonces, msg []byte, list []SigningCommitments, i int) (SignatureShare, error) {
	if nonces.wiped() {
		// Zero nonces would make the share give away the secret share.
		return SignatureShare{}, fmt.Errorf("frost: %w", ErrNonceUsed)
	}
	s := newSessionEnc(k.group, k.groupEnc, list, msg)
	if s.groupComm.Equal(edwards25519.NewIdentityPoint()) == 1 {
		// SerializeElement refuses the identity, so the RFC's
		// compute_challenge fails here; so does this.
		return SignatureShare{}, invalidArgument("the group commitment is the identity")
	}
	// z_i = d_i + e_i·ρ_i + λ_i·s_i·c
	z := new(edwards25519.Scalar).Multiply(s.lambda(k.id), k.secret)
	z.Multiply(z, s.challenge)
	z.MultiplyAdd(nonces.binding, s.binding[i], z)
	z.Add(z, nonces.hiding)
	return SignatureShare{ID: k.id, Z: z}, nil
}

// VerifySignatureShare is verify_signature_share: it returns nil if share
// is participant share.ID's valid share for msg under list, and a
// *ShareError naming the participant otherwise.
func VerifySignatureShare(pub *PublicKeyPackage, share SignatureShare, msg []byte, list []SigningCommitments) error {
	if err := checkCommitmentList(list, pub.minSigners); err != nil {
		return err
	}
	return newSessionEnc(pub.group, pub.groupEnc, list, msg).verifyShare(pub, share)
}

func (s *session) verifyShare(pub *PublicKeyPackage, share SignatureShare) error {
	i := s.index(share.ID)
	pk := pub.shares[share.ID]
	if i < 0 || pk == nil || share.Z == nil {
		return &ShareError{ID: share.ID}
	}
	c := s.list[i]
	// l = G·z_i; r = D_i + [ρ_i]E_i + [c·λ_i]PK_i
	cl := new(edwards25519.Scalar).Multiply(s.challenge, s.lambda(share.ID))
	r := new(edwards25519.Point).VarTimeMultiScalarMult(
		[]*edwards25519.Scalar{scalarFromUint(1), s.binding[i], cl},
		[]*edwards25519.Point{c.Hiding, c.Binding, pk})
	if new(edwards25519.Point).ScalarBaseMult(share.Z).Equal(r) != 1 {
		return &ShareError{ID: share.ID}
	}
	return nil
}

// Aggregate combines the shares of every participant in list into an
// Ed25519 signature over msg and verifies it (with crypto/ed25519) before
// returning it. If it does not verify, every share is checked and the
// error is a *ShareError naming the first participant whose share is
// invalid: a bad share is identified, never aggregated into a signature
// that is returned.
func Aggregate(pub *PublicKeyPackage, msg []byte, list []SigningCommitments, shares []SignatureShare) ([]byte, error) {
	a, err := PrepareAggregate(pub, msg, list)
	if err != nil {
		return nil, err
	}
	return a.Aggregate(shares)
}

// Aggregation is the part of Aggregate that needs no shares: the binding
// factors, the group commitment and the challenge for one (key, message,
// commitment list). A coordinator computes it while the shares are on
// their way, so that only the sum of the shares and the signature check
// remain when they arrive.
type Aggregation struct {
	pub *PublicKeyPackage
	msg []byte
	s   *session
}

// PrepareAggregate checks list and computes the Aggregation for msg. msg
// and list must not change until Aggregate returns.
func PrepareAggregate(pub *PublicKeyPackage, msg []byte, list []SigningCommitments) (*Aggregation, error) {
	if err := checkCommitmentList(list, pub.minSigners); err != nil {
		return nil, err
	}
	s := newSessionEnc(pub.group, pub.groupEnc, list, msg)
	if s.groupComm.Equal(edwards25519.NewIdentityPoint()) == 1 {
		return nil, invalidArgument("the group commitment is the identity")
	}
	return &Aggregation{pub: pub, msg: msg, s: s}, nil
}

// Aggregate is Aggregate with the shares of every participant in the
// prepared list, in its order.
func (a *Aggregation) Aggregate(shares []SignatureShare) ([]byte, error) {
	s, list := a.s, a.s.list
	if len(shares) != len(list) {
		return nil, invalidArgument("%d signature shares for %d commitments", len(shares), len(list))
	}
	z := edwards25519.NewScalar()
	for i, sh := range shares {
		if sh.ID != list[i].ID || sh.Z == nil {
			return nil, invalidArgument("signature shares not in the order of the commitment list")
		}
		z.Add(z, sh.Z)
	}
	sig := append(slices.Clip(s.commEnc), z.Bytes()...)
	// The group key's encoding from the session: GroupPublicKey would
	// encode it again, a field inversion on every signature.
	if ed25519.Verify(s.groupEnc, a.msg, sig) {
		return sig, nil
	}
	for _, sh := range shares {
		if err := s.verifyShare(a.pub, sh); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("frost: every share verifies but the signature does not: %w", signer.ErrInvalidSignature)
}
