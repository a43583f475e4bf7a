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

// Identifier names a participant. RFC 9591 identifiers are non-zero
// scalars; this package uses the scalars 1 … 65535, which is what a
// trusted dealer assigns (1 … n) and keeps wire encodings short. Zero is
// never valid.
type Identifier uint16

func (id Identifier) scalar() *edwards25519.Scalar { return scalarFromUint(uint64(id)) }

// serialize is SerializeScalar(identifier).
func (id Identifier) serialize() []byte { return id.scalar().Bytes() }

// MaxParticipants is the largest number of participants a key may have.
const MaxParticipants = 255

// VSSCommitment is the commitment to a secret-sharing polynomial: the
// coefficients times the base point, constant term first (vss_commit,
// RFC 9591 appendix C.2). Its first element is the group public key.
type VSSCommitment []*edwards25519.Point

// evaluate returns Σ C_j · x^j, the public key that a participant with
// identifier x must hold.
func (c VSSCommitment) evaluate(x Identifier) *edwards25519.Point {
	xs := x.scalar()
	pow := scalarFromUint(1)
	scalars := make([]*edwards25519.Scalar, len(c))
	for j := range c {
		scalars[j] = new(edwards25519.Scalar).Set(pow)
		pow.Multiply(pow, xs)
	}
	return new(edwards25519.Point).VarTimeMultiScalarMult(scalars, c)
}

// VerifyShare is vss_verify: it reports whether secret is the share of
// participant id under the commitment c.
func (c VSSCommitment) verifyShare(id Identifier, secret *edwards25519.Scalar) bool {
	return new(edwards25519.Point).ScalarBaseMult(secret).Equal(c.evaluate(id)) == 1
}

// KeyPackage is what one participant holds: its identifier, its secret
// share of the group key, and the public keys. Wipe it when done.
type KeyPackage struct {
	id         Identifier
	secret     *edwards25519.Scalar
	public     *edwards25519.Point // G · secret
	group      *edwards25519.Point
	groupEnc   []byte // group's encoding, made once; never modified
	minSigners int
}

// ID returns the participant's identifier.
func (k *KeyPackage) ID() Identifier { return k.id }

// MinSigners returns the threshold t: how many participants must sign.
func (k *KeyPackage) MinSigners() int { return k.minSigners }

// GroupPublicKey returns the group's Ed25519 public key.
func (k *KeyPackage) GroupPublicKey() ed25519.PublicKey { return groupEncoding(k.group, k.groupEnc) }

// VerifyingShare returns G · secret share, the participant's public key.
func (k *KeyPackage) VerifyingShare() []byte { return k.public.Bytes() }

// Wipe overwrites the secret share. The package cannot sign afterwards.
func (k *KeyPackage) Wipe() { wipeScalar(k.secret) }

// PublicKeyPackage is the public information about a key, the group info
// of RFC 9591: the group public key, every participant's public key share
// and the threshold. The coordinator uses it to verify shares.
type PublicKeyPackage struct {
	group      *edwards25519.Point
	groupEnc   []byte // group's encoding, made once; never modified
	shares     map[Identifier]*edwards25519.Point
	minSigners int
}

// groupEncoding returns a copy of a key package's cached group key
// encoding, or encodes the key if none is cached.
func groupEncoding(group *edwards25519.Point, enc []byte) []byte {
	if enc != nil {
		return slices.Clone(enc)
	}
	return group.Bytes()
}

// GroupPublicKey returns the group's Ed25519 public key.
func (p *PublicKeyPackage) GroupPublicKey() ed25519.PublicKey {
	return groupEncoding(p.group, p.groupEnc)
}

// MinSigners returns the threshold t.
func (p *PublicKeyPackage) MinSigners() int { return p.minSigners }

// IDs returns the participants' identifiers, ascending.
func (p *PublicKeyPackage) IDs() []Identifier {
	ids := make([]Identifier, 0, len(p.shares))
	for id := range p.shares {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// VerifyingShare returns participant id's public key share, or nil.
func (p *PublicKeyPackage) VerifyingShare(id Identifier) []byte {
	if s := p.shares[id]; s != nil {
		return s.Bytes()
	}
	return nil
}

// publicKeyPackage is derive_group_info (appendix C.2) for identifiers
// 1 … n.
func publicKeyPackage(c VSSCommitment, ids []Identifier) *PublicKeyPackage {
	p := &PublicKeyPackage{group: new(edwards25519.Point).Set(c[0]), groupEnc: c[0].Bytes(), shares: map[Identifier]*edwards25519.Point{}, minSigners: len(c)}
	for _, id := range ids {
		p.shares[id] = c.evaluate(id)
	}
	return p
}

// Dealt is the output of a trusted dealer: one KeyPackage per participant,
// the public key package and the VSS commitment each participant checks
// its share against.
type Dealt struct {
	Shares     []*KeyPackage
	Public     *PublicKeyPackage
	Commitment VSSCommitment
}

// SeedScalar returns the secret scalar that RFC 8032 derives from an
// Ed25519 seed (the first half of SHA-512(seed), clamped, reduced modulo
// L). Signatures by that scalar verify under the seed's public key.
func SeedScalar(seed []byte) (*edwards25519.Scalar, error) {
	if len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("frost: an Ed25519 seed has %d bytes, not %d: %w", ed25519.SeedSize, len(seed), signer.ErrInvalidKey)
	}
	h := sha512.Sum512(seed)
	defer clear(h[:])
	s, err := new(edwards25519.Scalar).SetBytesWithClamping(h[:32])
	if err != nil {
		panic("frost: SetBytesWithClamping refused 32 bytes")
	}
	return s, nil
}

// SplitSeed splits the Ed25519 key with the given 32-byte seed (an
// existing validator key) into n shares, any t of which sign for its
// public key: the trusted-dealer key generation of RFC 9591 appendix C,
// with the secret RFC 8032 derives from the seed. rand supplies the
// polynomial's coefficients. The caller delivers each share to its
// participant (who checks it with NewKeyPackage) and then deletes the seed
// and the shares.
func SplitSeed(seed []byte, t, n int, rand io.Reader) (*Dealt, error) {
	s, err := SeedScalar(seed)
	if err != nil {
		return nil, err
	}
	defer wipeScalar(s)
	return Split(s, t, n, rand)
}

// Split is trusted_dealer_keygen of RFC 9591 appendix C: it splits secret
// into n shares with threshold t, for identifiers 1 … n.
func Split(secret *edwards25519.Scalar, t, n int, rand io.Reader) (*Dealt, error) {
	if err := checkThreshold(t, n); err != nil {
		return nil, err
	}
	if isZero(secret) {
		return nil, fmt.Errorf("frost: the secret is zero: %w", signer.ErrInvalidKey)
	}
	coeffs := make([]*edwards25519.Scalar, t-1)
	for i := range coeffs {
		c, err := randomScalar(rand)
		if err != nil {
			return nil, err
		}
		coeffs[i] = c
	}
	return split(secret, coeffs, n)
}

func checkThreshold(t, n int) error {
	if t < 2 || n < t || n > MaxParticipants {
		return invalidArgument("threshold %d of %d participants: need 2 ≤ t ≤ n ≤ %d", t, n, MaxParticipants)
	}
	return nil
}

// split is secret_share_shard with the given non-constant coefficients.
func split(secret *edwards25519.Scalar, coeffs []*edwards25519.Scalar, n int) (*Dealt, error) {
	poly := append([]*edwards25519.Scalar{secret}, coeffs...)
	defer func() {
		for _, c := range coeffs {
			wipeScalar(c)
		}
	}()
	commitment := vssCommit(poly)
	ids := make([]Identifier, n)
	d := &Dealt{Commitment: commitment}
	groupEnc := commitment[0].Bytes()
	for i := range n {
		ids[i] = Identifier(i + 1)
		sk := polynomialEvaluate(ids[i].scalar(), poly)
		d.Shares = append(d.Shares, &KeyPackage{id: ids[i], secret: sk,
			public: new(edwards25519.Point).ScalarBaseMult(sk), group: new(edwards25519.Point).Set(commitment[0]), groupEnc: groupEnc, minSigners: len(poly)})
	}
	d.Public = publicKeyPackage(commitment, ids)
	return d, nil
}

func vssCommit(poly []*edwards25519.Scalar) VSSCommitment {
	c := make(VSSCommitment, len(poly))
	for i, a := range poly {
		c[i] = new(edwards25519.Point).ScalarBaseMult(a)
	}
	return c
}

// polynomialEvaluate is Horner's rule, appendix A.1.
func polynomialEvaluate(x *edwards25519.Scalar, poly []*edwards25519.Scalar) *edwards25519.Scalar {
	v := edwards25519.NewScalar()
	for i := len(poly) - 1; i >= 0; i-- {
		v.Multiply(v, x)
		v.Add(v, poly[i])
	}
	return v
}

// NewKeyPackage checks a share received from a dealer against the VSS
// commitment (vss_verify) and returns the participant's key package. Every
// participant must have received the same commitment; compare it out of
// band (its first element is the group public key).
func NewKeyPackage(id Identifier, secretShare []byte, c VSSCommitment) (*KeyPackage, error) {
	if id == 0 {
		return nil, invalidArgument("identifier 0")
	}
	if len(c) < 2 || len(c) > MaxParticipants {
		return nil, invalidArgument("a VSS commitment of %d elements", len(c))
	}
	sk, err := deserializeScalar(secretShare)
	if err != nil {
		return nil, encodingError("secret share", err)
	}
	if !c.verifyShare(id, sk) {
		wipeScalar(sk)
		return nil, fmt.Errorf("frost: the share of participant %d does not match the VSS commitment: %w", id, signer.ErrInvalidKey)
	}
	return &KeyPackage{id: id, secret: sk, public: new(edwards25519.Point).ScalarBaseMult(sk),
		group: new(edwards25519.Point).Set(c[0]), groupEnc: c[0].Bytes(), minSigners: len(c)}, nil
}

// SecretShare returns the encoding of the participant's secret share, for
// storing it (encrypted) or handing it over. Wipe the result after use.
func (k *KeyPackage) SecretShare() []byte { return k.secret.Bytes() }
