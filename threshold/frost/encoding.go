package frost

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"filippo.io/edwards25519"
)

// Encodings of the wire elements. Identifiers are 2 bytes, big-endian;
// scalars and elements as SerializeScalar and SerializeElement. Every
// decoder refuses trailing bytes, scalars ≥ L, and elements that are not
// canonical, are the identity or lie outside the prime-order subgroup.

// Encoded sizes.
const (
	SigningCommitmentsSize = 2 + 2*ElementSize // 66
	SignatureShareSize     = 2 + ScalarSize    // 34
	DKGRound2Size          = 2 + 2 + ScalarSize
	keyPackageSize         = 1 + 2 + 1 + ScalarSize + ElementSize
)

const keyPackageVersion = 1

var errLength = errors.New("wrong length")

func decodeElement(b []byte, what string) (*edwards25519.Point, error) {
	p, err := deserializeElement(b)
	if err != nil {
		return nil, encodingError(what, err)
	}
	return p, nil
}

func decodeID(b []byte, what string) (Identifier, error) {
	id := Identifier(binary.BigEndian.Uint16(b))
	if id == 0 {
		return 0, encodingError(what, errors.New("identifier 0"))
	}
	return id, nil
}

// AppendBinary appends the 66-byte encoding of c to b.
func (c SigningCommitments) AppendBinary(b []byte) ([]byte, error) {
	if c.ID == 0 || c.Hiding == nil || c.Binding == nil {
		return nil, invalidArgument("incomplete signing commitments")
	}
	b = binary.BigEndian.AppendUint16(b, uint16(c.ID))
	if enc := c.encoding(); enc != nil {
		return append(b, enc...), nil
	}
	return appendEncodings(b, c.Hiding, c.Binding), nil
}

// ParseSigningCommitments decodes 66 bytes written by AppendBinary.
func ParseSigningCommitments(b []byte) (SigningCommitments, error) {
	const what = "signing commitments"
	if len(b) != SigningCommitmentsSize {
		return SigningCommitments{}, encodingError(what, errLength)
	}
	id, err := decodeID(b, what)
	if err != nil {
		return SigningCommitments{}, err
	}
	h, err := decodeElement(b[2:34], what)
	if err != nil {
		return SigningCommitments{}, err
	}
	e, err := decodeElement(b[34:], what)
	if err != nil {
		return SigningCommitments{}, err
	}
	// The bytes are canonical (decodeElement checked): they are the
	// elements' encodings, kept so that they are not computed again.
	return withEncoding(SigningCommitments{ID: id, Hiding: h, Binding: e}, b[2:]), nil
}

// AppendBinary appends the 34-byte encoding of s to b.
func (s SignatureShare) AppendBinary(b []byte) ([]byte, error) {
	if s.ID == 0 || s.Z == nil {
		return nil, invalidArgument("incomplete signature share")
	}
	b = binary.BigEndian.AppendUint16(b, uint16(s.ID))
	return append(b, s.Z.Bytes()...), nil
}

// ParseSignatureShare decodes 34 bytes written by AppendBinary
// (DeserializeScalar, which the coordinator must apply to every share).
func ParseSignatureShare(b []byte) (SignatureShare, error) {
	const what = "signature share"
	if len(b) != SignatureShareSize {
		return SignatureShare{}, encodingError(what, errLength)
	}
	id, err := decodeID(b, what)
	if err != nil {
		return SignatureShare{}, err
	}
	z, err := deserializeScalar(b[2:])
	if err != nil {
		return SignatureShare{}, encodingError(what, err)
	}
	return SignatureShare{ID: id, Z: z}, nil
}

// AppendBinary appends the commitment: a count byte and the elements.
func (c VSSCommitment) AppendBinary(b []byte) ([]byte, error) {
	if len(c) < 1 || len(c) > MaxParticipants {
		return nil, invalidArgument("a VSS commitment of %d elements", len(c))
	}
	b = append(b, byte(len(c)))
	for _, p := range c {
		if p == nil {
			return nil, invalidArgument("a VSS commitment with a nil element")
		}
		b = append(b, p.Bytes()...)
	}
	return b, nil
}

// parseVSSCommitment decodes a commitment at the start of b and returns
// the rest.
func parseVSSCommitment(b []byte, what string) (VSSCommitment, []byte, error) {
	if len(b) < 1 || b[0] == 0 || len(b) < 1+int(b[0])*ElementSize {
		return nil, nil, encodingError(what, errLength)
	}
	n := int(b[0])
	b = b[1:]
	c := make(VSSCommitment, n)
	for i := range c {
		p, err := decodeElement(b[:ElementSize], what)
		if err != nil {
			return nil, nil, err
		}
		c[i] = p
		b = b[ElementSize:]
	}
	return c, b, nil
}

// ParseVSSCommitment decodes a commitment written by AppendBinary.
func ParseVSSCommitment(b []byte) (VSSCommitment, error) {
	c, rest, err := parseVSSCommitment(b, "VSS commitment")
	if err == nil && len(rest) != 0 {
		return nil, encodingError("VSS commitment", errLength)
	}
	return c, err
}

// AppendBinary appends the round-1 package: the identifier, the
// commitment, R and μ.
func (p *DKGRound1) AppendBinary(b []byte) ([]byte, error) {
	if p.ID == 0 || p.R == nil || p.Mu == nil {
		return nil, invalidArgument("incomplete DKG round-1 package")
	}
	b = binary.BigEndian.AppendUint16(b, uint16(p.ID))
	b, err := p.Commitment.AppendBinary(b)
	if err != nil {
		return nil, err
	}
	b = append(b, p.R.Bytes()...)
	return append(b, p.Mu.Bytes()...), nil
}

// ParseDKGRound1 decodes a round-1 package. It checks encodings only; the
// proof of knowledge is checked by DKG.Round2.
func ParseDKGRound1(b []byte) (*DKGRound1, error) {
	const what = "DKG round-1 package"
	if len(b) < 2 {
		return nil, encodingError(what, errLength)
	}
	id, err := decodeID(b, what)
	if err != nil {
		return nil, err
	}
	c, rest, err := parseVSSCommitment(b[2:], what)
	if err != nil {
		return nil, err
	}
	if len(rest) != ElementSize+ScalarSize {
		return nil, encodingError(what, errLength)
	}
	r, err := decodeElement(rest[:ElementSize], what)
	if err != nil {
		return nil, err
	}
	mu, err := deserializeScalar(rest[ElementSize:])
	if err != nil {
		return nil, encodingError(what, err)
	}
	return &DKGRound1{ID: id, Commitment: c, R: r, Mu: mu}, nil
}

// AppendBinary appends the 36-byte round-2 package.
func (p *DKGRound2) AppendBinary(b []byte) ([]byte, error) {
	if p.From == 0 || p.To == 0 || p.Share == nil {
		return nil, invalidArgument("incomplete DKG round-2 package")
	}
	b = binary.BigEndian.AppendUint16(b, uint16(p.From))
	b = binary.BigEndian.AppendUint16(b, uint16(p.To))
	return append(b, p.Share.Bytes()...), nil
}

// ParseDKGRound2 decodes a round-2 package.
func ParseDKGRound2(b []byte) (*DKGRound2, error) {
	const what = "DKG round-2 package"
	if len(b) != DKGRound2Size {
		return nil, encodingError(what, errLength)
	}
	from, err := decodeID(b, what)
	if err != nil {
		return nil, err
	}
	to, err := decodeID(b[2:], what)
	if err != nil {
		return nil, err
	}
	s, err := deserializeScalar(b[4:])
	if err != nil {
		return nil, encodingError(what, err)
	}
	return &DKGRound2{From: from, To: to, Share: s}, nil
}

// MarshalBinary encodes the key package: a version byte, the identifier,
// the threshold, the secret share and the group public key. The result is
// secret: store it encrypted (as a signer.Secret or key file) and wipe it.
func (k *KeyPackage) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, keyPackageSize)
	b = append(b, keyPackageVersion)
	b = binary.BigEndian.AppendUint16(b, uint16(k.id))
	b = append(b, byte(k.minSigners))
	b = append(b, k.secret.Bytes()...)
	return append(b, k.group.Bytes()...), nil
}

// ParseKeyPackage decodes a key package written by MarshalBinary.
func ParseKeyPackage(b []byte) (*KeyPackage, error) {
	const what = "key package"
	if len(b) != keyPackageSize {
		return nil, encodingError(what, errLength)
	}
	if b[0] != keyPackageVersion {
		return nil, encodingError(what, fmt.Errorf("version %d", b[0]))
	}
	id, err := decodeID(b[1:], what)
	if err != nil {
		return nil, err
	}
	t := int(b[3])
	if t < 2 {
		return nil, encodingError(what, fmt.Errorf("threshold %d", t))
	}
	sk, err := deserializeScalar(b[4:36])
	if err != nil || isZero(sk) {
		if err == nil {
			err = errZeroScalar
		}
		return nil, encodingError(what, err)
	}
	g, err := decodeElement(b[36:], what)
	if err != nil {
		wipeScalar(sk)
		return nil, err
	}
	// b[36:] is canonical (decodeElement checked it): it is g's encoding.
	return &KeyPackage{id: id, secret: sk, public: new(edwards25519.Point).ScalarBaseMult(sk), group: g,
		groupEnc: slices.Clone(b[36:]), minSigners: t}, nil
}

// MarshalBinary encodes the public key package: a version byte, the
// threshold, the number of participants, the group key, then each
// participant's identifier and public key share, ascending.
func (p *PublicKeyPackage) MarshalBinary() ([]byte, error) {
	ids := p.IDs()
	b := []byte{keyPackageVersion, byte(p.minSigners), byte(len(ids))}
	b = append(b, p.group.Bytes()...)
	for _, id := range ids {
		b = binary.BigEndian.AppendUint16(b, uint16(id))
		b = append(b, p.shares[id].Bytes()...)
	}
	return b, nil
}

// ParsePublicKeyPackage decodes a public key package and checks that its
// shares are consistent: every t consecutive shares interpolate to the
// group key, so all lie on one polynomial of degree t-1 whose value at 0
// is the group key.
func ParsePublicKeyPackage(b []byte) (*PublicKeyPackage, error) {
	const what = "public key package"
	if len(b) < 3+ElementSize || b[0] != keyPackageVersion {
		return nil, encodingError(what, errLength)
	}
	t, n := int(b[1]), int(b[2])
	if checkThreshold(t, n) != nil {
		return nil, encodingError(what, fmt.Errorf("threshold %d of %d", t, n))
	}
	if len(b) != 3+ElementSize+n*(2+ElementSize) {
		return nil, encodingError(what, errLength)
	}
	g, err := decodeElement(b[3:3+ElementSize], what)
	if err != nil {
		return nil, err
	}
	p := &PublicKeyPackage{group: g, groupEnc: slices.Clone(b[3 : 3+ElementSize]), shares: map[Identifier]*edwards25519.Point{}, minSigners: t}
	rest := b[3+ElementSize:]
	var ids []Identifier
	for range n {
		id, err := decodeID(rest, what)
		if err != nil {
			return nil, err
		}
		if len(ids) > 0 && ids[len(ids)-1] >= id {
			return nil, encodingError(what, errors.New("identifiers not ascending"))
		}
		s, err := decodeElement(rest[2:2+ElementSize], what)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
		p.shares[id] = s
		rest = rest[2+ElementSize:]
	}
	if !p.consistent(ids) {
		return nil, encodingError(what, errors.New("the public key shares do not interpolate to the group key"))
	}
	return p, nil
}

func (p *PublicKeyPackage) consistent(ids []Identifier) bool {
	for start := 0; start+p.minSigners <= len(ids); start++ {
		window := ids[start : start+p.minSigners]
		s := &session{}
		for _, id := range window {
			s.list = append(s.list, SigningCommitments{ID: id})
		}
		scalars := make([]*edwards25519.Scalar, len(window))
		points := make([]*edwards25519.Point, len(window))
		for i, id := range window {
			scalars[i] = s.lambda(id)
			points[i] = p.shares[id]
		}
		if new(edwards25519.Point).VarTimeMultiScalarMult(scalars, points).Equal(p.group) != 1 {
			return false
		}
	}
	return true
}

// AppendCommitmentElements appends the hiding and binding elements of each
// of cs, 64 bytes a pair (AppendBinary without the identifiers), with one
// field inversion for all of them rather than one per element; for
// sending a batch of presigned commitments.
//
// Commitments decoded by ParseSigningCommitments, or made by a
// NonceStore, carry their encodings, which are copied rather than computed
// again.
func AppendCommitmentElements(dst []byte, cs ...SigningCommitments) ([]byte, error) {
	for _, c := range cs {
		if c.Hiding == nil || c.Binding == nil {
			return nil, invalidArgument("incomplete signing commitments")
		}
	}
	return appendCommitmentElements(dst, cs), nil
}

// appendCommitmentElements appends the element encodings of cs (which are
// complete), copying those cached and computing the rest with one field
// inversion.
func appendCommitmentElements(dst []byte, cs []SigningCommitments) []byte {
	const pair = 2 * ElementSize
	start := len(dst)
	dst = slices.Grow(dst, len(cs)*pair)
	var missing []*edwards25519.Point
	for _, c := range cs {
		if enc := c.encoding(); enc != nil {
			dst = append(dst, enc...)
		} else {
			dst = append(dst, make([]byte, pair)...)
			missing = append(missing, c.Hiding, c.Binding)
		}
	}
	if missing == nil {
		return dst
	}
	elems := appendEncodings(nil, missing...)
	for i, c := range cs {
		if c.encoding() == nil {
			copy(dst[start+i*pair:][:pair], elems[:pair])
			elems = elems[pair:]
		}
	}
	return dst
}
