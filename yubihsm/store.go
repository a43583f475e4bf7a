package yubihsm

import (
	"context"
	"crypto"
	"crypto/sha512"
	"crypto/subtle"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"filippo.io/edwards25519"
	"github.com/certusone/yubihsm-go/commands"

	"github.com/signerkit/signerkit/signer"
)

// Key management: the Store as a signer key store.

func checkLabel(label string) error {
	if label == "" || len(label) > LabelSize || strings.IndexByte(label, 0) >= 0 {
		return fmt.Errorf("yubihsm: label %q: want 1 to %d bytes without NUL: %w", label, LabelSize, signer.ErrInvalidArgument)
	}
	return nil
}

// GenerateKey makes a key inside the device (Generate Asymmetric Key) that
// can only sign, under a new object id the device picks, and returns it.
// A label already in use fails with an error wrapping signer.ErrKeyExists.
func (s *Store) GenerateKey(ctx context.Context, alg signer.Algorithm, label string) (signer.KeyInfo, error) {
	return s.generate(ctx, alg, label, 0)
}

// generate is GenerateKey with capabilities extra besides signing.
func (s *Store) generate(ctx context.Context, alg signer.Algorithm, label string, extra uint64) (signer.KeyInfo, error) {
	da, capability, err := s.newKey(ctx, alg, label)
	if err != nil {
		return signer.KeyInfo{}, err
	}
	resp, err := s.pool.do(ctx, func() (*commands.CommandMessage, error) {
		return commands.CreateGenerateAsymmetricKeyCommand(0, []byte(label), s.l.cfg.Domains, capability|extra, da)
	})
	if err != nil {
		return signer.KeyInfo{}, wrap(err, "generate %v key %q", alg, label)
	}
	r, ok := resp.(*commands.CreateAsymmetricKeyResponse)
	if !ok {
		return signer.KeyInfo{}, &protocolError{fmt.Sprintf("generate: response %T", resp)}
	}
	// yubihsm-go misreads the new id: it returns (low byte << 8) | 0x80
	// (docs/protocols.md B.7). Find the key by its label and check the byte
	// that survived.
	keys, err := s.find(ctx, signer.KeyRef{Label: label})
	if err != nil {
		return signer.KeyInfo{}, err
	}
	for _, k := range keys {
		if byte(k.id) == byte(r.KeyID>>8) {
			return k.info(), nil
		}
	}
	return signer.KeyInfo{}, &protocolError{fmt.Sprintf("generated key %q not found after generation", label)}
}

// ImportKey puts an existing ed25519.PrivateKey, *ecdsa.PrivateKey on
// P-256, P-384 or secp256k1, *secp256k1.PrivateKey, or *rsa.PrivateKey of
// 2048, 3072 or 4096 bits (two primes) into the device (Put Asymmetric
// Key), able only to sign: an RSA key with alg signer.RSAPSS with PSS
// only, otherwise with PKCS #1 v1.5 and PSS.
func (s *Store) ImportKey(ctx context.Context, priv crypto.PrivateKey, alg signer.Algorithm, label string) (signer.KeyInfo, error) {
	secret, pub, def, err := importSecret(priv)
	if err != nil {
		return signer.KeyInfo{}, err
	}
	if alg == 0 {
		alg = def
	}
	defer clear(secret)
	if err := alg.CheckKey(pub); err != nil {
		return signer.KeyInfo{}, fmt.Errorf("yubihsm: %w", err)
	}
	da, capability, err := s.newKey(ctx, alg, label)
	if err != nil {
		return signer.KeyInfo{}, err
	}
	if bits := rsaBits(pub); bits != 0 {
		da = rsaDeviceAlgorithm(bits)
	}
	resp, err := s.pool.do(ctx, func() (*commands.CommandMessage, error) {
		return commands.CreatePutAsymmetricKeyCommand(0, []byte(label), s.l.cfg.Domains, capability, da, secret, nil)
	})
	if err != nil {
		return signer.KeyInfo{}, wrap(err, "import %v key %q", alg, label)
	}
	r, ok := resp.(*commands.PutAsymmetricKeyResponse)
	if !ok {
		return signer.KeyInfo{}, &protocolError{fmt.Sprintf("put: response %T", resp)}
	}
	k, err := s.describe(ctx, r.KeyID)
	if err != nil {
		return signer.KeyInfo{}, err
	}
	if !k.pub.(interface{ Equal(crypto.PublicKey) bool }).Equal(pub) {
		return signer.KeyInfo{}, &protocolError{"the device holds another public key than the one imported"}
	}
	return k.info(), nil
}

// ed25519SeedMatches reports whether pub is the public key of seed
// (RFC 8032 5.1.5), computed without crypto/ed25519, which would leave a
// copy of the expanded key behind; the hash is wiped.
func ed25519SeedMatches(seed, pub []byte) bool {
	h := sha512.Sum512(seed)
	defer clear(h[:])
	s, err := edwards25519.NewScalar().SetBytesWithClamping(h[:32])
	if err != nil {
		return false
	}
	a := new(edwards25519.Point).ScalarBaseMult(s)
	*s = edwards25519.Scalar{}
	return subtle.ConstantTimeCompare(a.Bytes(), pub) == 1
}

// newKey checks what GenerateKey and ImportKey are asked for: an
// algorithm the device has and a valid label no key holds yet. It returns
// the device's algorithm and the sign capability of the new key.
func (s *Store) newKey(ctx context.Context, alg signer.Algorithm, label string) (commands.Algorithm, uint64, error) {
	da, capability, err := deviceAlgorithm(alg)
	if err != nil {
		return 0, 0, err
	}
	if err := checkLabel(label); err != nil {
		return 0, 0, err
	}
	keys, err := s.find(ctx, signer.KeyRef{Label: label})
	if err != nil {
		return 0, 0, err
	}
	if len(keys) > 0 {
		return 0, 0, fmt.Errorf("yubihsm: label %q is taken by object %04x: %w", label, keys[0].id, signer.ErrKeyExists)
	}
	return da, capability, nil
}

// object is an asymmetric key on the device.
type object struct {
	id    uint16
	label string
	alg   signer.Algorithm
	pub   crypto.PublicKey
	caps  uint64
}

// may reports whether an RSA key has the capability to sign with a:
// sign-pkcs for signer.RSAPKCS1v15, sign-pss for signer.RSAPSS.
func (o object) may(a signer.Algorithm) bool {
	need := commands.CapabilityAsymmetricSignPkcs
	if a == signer.RSAPSS {
		need = commands.CapabilityAsymmetricSignPss
	}
	return o.caps&need != 0
}

func (o object) info() signer.KeyInfo {
	return signer.KeyInfo{Label: o.label, ID: fmt.Sprintf("%04x", o.id), Algorithm: o.alg, Public: o.pub}
}

// ParseID parses a KeyInfo.ID (hex, as "00ab" or "0x00ab") as an object id.
func ParseID(s string) (uint16, error) {
	v, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(s), "0x"), 16, 16)
	if err != nil || v == 0 {
		return 0, fmt.Errorf("yubihsm: object id %q: want 0001 to ffff in hex: %w", s, signer.ErrInvalidArgument)
	}
	return uint16(v), nil
}

// describe reads an asymmetric key's label, algorithm and public key.
func (s *Store) describe(ctx context.Context, id uint16) (object, error) {
	resp, err := s.pool.do(ctx, func() (*commands.CommandMessage, error) {
		return commands.CreateGetObjectInfoCommand(id, commands.ObjectTypeAsymmetricKey)
	})
	if err != nil {
		return object{}, wrap(err, "object %04x", id)
	}
	info, ok := resp.(*commands.ObjectInfoResponse)
	if !ok {
		return object{}, &protocolError{fmt.Sprintf("object info: response %T", resp)}
	}
	o := object{id: id, label: strings.TrimRight(string(info.Label[:]), "\x00"), caps: info.Capabilities}
	alg, ok := signerAlgorithm(info.Algorithm, info.Capabilities)
	if !ok {
		return object{}, fmt.Errorf("yubihsm: object %04x has device algorithm %d: %w", id, info.Algorithm, signer.ErrUnsupported)
	}
	o.alg = alg
	resp, err = s.pool.do(ctx, func() (*commands.CommandMessage, error) { return commands.CreateGetPubKeyCommand(id) })
	if err != nil {
		return object{}, wrap(err, "public key of %04x", id)
	}
	pk, ok := resp.(*commands.GetPubKeyResponse)
	if !ok {
		return object{}, &protocolError{fmt.Sprintf("get public key: response %T", resp)}
	}
	if o.pub, err = parsePublic(pk); err != nil {
		return object{}, err
	}
	return o, nil
}

// find returns the asymmetric keys matching ref's id and label.
func (s *Store) find(ctx context.Context, ref signer.KeyRef) ([]object, error) {
	opts := []commands.ListCommandOption{commands.NewObjectTypeOption(commands.ObjectTypeAsymmetricKey)}
	if ref.ID != "" {
		id, err := ParseID(ref.ID)
		if err != nil {
			return nil, err
		}
		opts = append(opts, commands.NewIDOption(id))
	}
	if ref.Label != "" {
		if ref.ID != "" && len(ref.Label) > LabelSize {
			return nil, nil // the id names a key, whose label cannot be this long
		}
		if err := checkLabel(ref.Label); err != nil {
			return nil, err
		}
		lo, err := commands.NewLabelOption([]byte(ref.Label))
		if err != nil {
			return nil, fmt.Errorf("yubihsm: label %q: %v: %w", ref.Label, err, signer.ErrInvalidArgument)
		}
		opts = append(opts, lo)
	}
	resp, err := s.pool.do(ctx, func() (*commands.CommandMessage, error) { return commands.CreateListObjectsCommand(opts...) })
	if err != nil {
		return nil, wrap(err, "list objects")
	}
	list, ok := resp.(*commands.ListObjectsResponse)
	if !ok {
		return nil, &protocolError{fmt.Sprintf("list objects: response %T", resp)}
	}
	var out []object
	for _, o := range list.Objects {
		if o.ObjectType != commands.ObjectTypeAsymmetricKey {
			continue
		}
		k, err := s.describe(ctx, o.ObjectID)
		if errors.Is(err, signer.ErrUnsupported) || errors.Is(err, signer.ErrKeyNotFound) {
			continue // an RSA key, or deleted since the list
		}
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
}

// ListKeys lists the Ed25519, ECDSA and RSA keys the authentication key can
// see, sorted by label.
func (s *Store) ListKeys(ctx context.Context) ([]signer.KeyInfo, error) {
	out, err := s.FindKeys(ctx, signer.KeyRef{})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b signer.KeyInfo) int { return strings.Compare(a.Label+"\x00"+a.ID, b.Label+"\x00"+b.ID) })
	return out, nil
}

// FindKeys returns the keys matching ref (by object id, label or both).
func (s *Store) FindKeys(ctx context.Context, ref signer.KeyRef) ([]signer.KeyInfo, error) {
	keys, err := s.find(ctx, ref)
	if err != nil {
		return nil, err
	}
	out := make([]signer.KeyInfo, len(keys))
	for i, k := range keys {
		out[i] = k.info()
	}
	return out, nil
}

// PublicKey returns the public key of the asymmetric key with object id
// id.
func (s *Store) PublicKey(ctx context.Context, id uint16) (crypto.PublicKey, error) {
	o, err := s.describe(ctx, id)
	if err != nil {
		return nil, err
	}
	return o.pub, nil
}

// resolve finds the one key ref names.
func (s *Store) resolve(ctx context.Context, ref signer.KeyRef) (object, error) {
	if ref.ID == "" && ref.Label == "" {
		return object{}, fmt.Errorf("yubihsm: empty key reference: %w", signer.ErrInvalidArgument)
	}
	keys, err := s.find(ctx, ref)
	if err != nil {
		return object{}, err
	}
	switch len(keys) {
	case 0:
		return object{}, fmt.Errorf("yubihsm: no key %v: %w", ref, signer.ErrKeyNotFound)
	case 1:
		return keys[0], nil
	}
	return object{}, fmt.Errorf("yubihsm: %d keys are labelled %q; open by id: %w", len(keys), ref.Label, signer.ErrInvalidArgument)
}

// DeleteKey deletes the key ref names.
func (s *Store) DeleteKey(ctx context.Context, ref signer.KeyRef) error {
	o, err := s.resolve(ctx, ref)
	if err != nil {
		return err
	}
	_, err = s.pool.do(ctx, func() (*commands.CommandMessage, error) {
		return commands.CreateDeleteObjectCommand(o.id, commands.ObjectTypeAsymmetricKey)
	})
	if err != nil {
		return wrap(err, "delete %04x", o.id)
	}
	return nil
}

// OpenKey opens the key ref names as a *Signer with sessions of its own,
// which keeps working after the Store is closed, until its own Close.
func (s *Store) OpenKey(ctx context.Context, ref signer.KeyRef) (signer.Signer, error) {
	k, err := s.openKey(ctx, ref)
	if err != nil {
		return nil, err // a nil interface, not a nil *Signer
	}
	return k, nil
}

func (s *Store) openKey(ctx context.Context, ref signer.KeyRef) (*Signer, error) {
	o, err := s.resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	alg := o.alg
	if ref.Algorithm != 0 && ref.Algorithm != o.alg {
		if !o.alg.IsRSA() || !ref.Algorithm.IsRSA() || !o.may(ref.Algorithm) {
			return nil, fmt.Errorf("yubihsm: key %04x is %v, not %v: %w", o.id, o.alg, ref.Algorithm, signer.ErrUnsupported)
		}
		alg = ref.Algorithm
	}
	if !s.l.acquire() {
		return nil, fmt.Errorf("yubihsm: %w", signer.ErrClosed)
	}
	return &Signer{l: s.l, pool: newPool(s.l, s.l.cfg.sessions()), id: o.id, label: o.label, alg: alg, pub: o.pub, obj: o}, nil
}
