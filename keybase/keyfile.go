package keybase

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"golang.org/x/crypto/nacl/secretbox"

	"github.com/signerkit/signerkit/internal/bcryptsalt"
	"github.com/signerkit/signerkit/signer"
)

// DefaultCost is the bcrypt cost gnokey uses, and the only one it reads.
const DefaultCost = 12

const (
	saltSize  = bcryptsalt.SaltSize
	nonceSize = 24
	// costHeader is this package's own header, written only for a cost
	// other than DefaultCost: gnokey writes none and always uses 12, and it
	// ignores headers it does not know.
	costHeader = "cost"
)

// The amino "Any" type URLs of tm2's keys (protocols.md C.3).
const (
	typePrivEd25519   = "/tm.PrivKeyEd25519"
	typePrivSecp256k1 = "/tm.PrivKeySecp256k1"
	typePubEd25519    = "/tm.PubKeyEd25519"
	typePubSecp256k1  = "/tm.PubKeySecp256k1"
)

// KeyTypeError reports a key of a type this package does not sign with
// (gnokey also stores multisig and Ledger references, which hold no
// private key). It unwraps to signer.ErrUnsupported.
type KeyTypeError struct {
	// Type is the key's amino type URL, quoted, e.g. "/tm.PrivKeyMultisig".
	Type string
}

func (e *KeyTypeError) Error() string {
	return fmt.Sprintf("keybase: key type %s: only %s and %s are supported", e.Type, typePrivEd25519, typePrivSecp256k1)
}

// Unwrap returns signer.ErrUnsupported.
func (e *KeyTypeError) Unwrap() error { return signer.ErrUnsupported }

var errWrongPassphrase = fmt.Errorf("keybase: %w", signer.ErrWrongPassphrase)

// privateKey is a decrypted key, owned: wipe clears it.
type privateKey struct {
	alg signer.Algorithm
	ed  ed25519.PrivateKey
	k1  *secp256k1.PrivateKey
}

func (k *privateKey) public() crypto.PublicKey {
	if k.alg == signer.Ed25519 {
		return append(ed25519.PublicKey(nil), k.ed[32:]...)
	}
	return k.k1.PubKey().ToECDSA()
}

func (k *privateKey) wipe() {
	if k == nil {
		return
	}
	clear(k.ed)
	if k.k1 != nil {
		k.k1.Zero()
	}
}

// fromPrivate makes an owned copy of an ed25519.PrivateKey or a
// secp256k1 *ecdsa.PrivateKey.
func fromPrivate(priv crypto.PrivateKey) (*privateKey, error) {
	switch p := priv.(type) {
	case ed25519.PrivateKey:
		if len(p) != ed25519.PrivateKeySize {
			return nil, fmt.Errorf("keybase: Ed25519 private key is %d bytes, want %d: %w", len(p), ed25519.PrivateKeySize, signer.ErrInvalidKey)
		}
		own := ed25519.NewKeyFromSeed(p.Seed())
		if !bytes.Equal(own, p) {
			clear(own)
			return nil, fmt.Errorf("keybase: Ed25519 public key is not the one its seed gives: %w", signer.ErrInvalidKey)
		}
		return &privateKey{alg: signer.Ed25519, ed: own}, nil
	case *ecdsa.PrivateKey:
		if p == nil || p.D == nil || p.Curve != signer.Secp256k1() {
			return nil, fmt.Errorf("keybase: only secp256k1 ECDSA keys are supported: %w", signer.ErrUnsupported)
		}
		if p.D.Sign() <= 0 || p.D.BitLen() > 256 {
			return nil, fmt.Errorf("keybase: secp256k1 scalar out of range: %w", signer.ErrInvalidKey)
		}
		d := p.D.FillBytes(make([]byte, 32))
		defer clear(d)
		k, err := secp256k1FromScalar(d)
		if err != nil {
			return nil, err
		}
		if p.X != nil && !p.PublicKey.Equal(k.public()) {
			k.wipe()
			return nil, fmt.Errorf("keybase: secp256k1 private key does not match its public key: %w", signer.ErrInvalidKey)
		}
		return k, nil
	}
	return nil, fmt.Errorf("keybase: %T is not a key gnokey holds (ed25519.PrivateKey or secp256k1 *ecdsa.PrivateKey): %w", priv, signer.ErrUnsupported)
}

func secp256k1FromScalar(d []byte) (*privateKey, error) {
	var s secp256k1.ModNScalar
	if len(d) != 32 || s.SetByteSlice(d) || s.IsZero() {
		return nil, fmt.Errorf("keybase: secp256k1 scalar is not 32 bytes in [1, n-1]: %w", signer.ErrInvalidKey)
	}
	return &privateKey{alg: signer.ECDSASecp256k1, k1: secp256k1.NewPrivateKey(&s)}, nil
}

// generate makes a new key for alg.
func generate(alg signer.Algorithm) (*privateKey, error) {
	switch alg {
	case signer.Ed25519:
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, fmt.Errorf("keybase: %w", err)
		}
		return &privateKey{alg: alg, ed: priv}, nil
	case signer.ECDSASecp256k1:
		priv, err := secp256k1.GeneratePrivateKey()
		if err != nil {
			return nil, fmt.Errorf("keybase: %w", err)
		}
		return &privateKey{alg: alg, k1: priv}, nil
	}
	return nil, fmt.Errorf("keybase: gnokey keys are Ed25519 or secp256k1, not %v: %w", alg, signer.ErrUnsupported)
}

// anyBytes is amino's encoding of a registered type: a protobuf Any of
// {1: type URL, 2: {1: key bytes}}.
func anyBytes(typeURL string, key []byte) []byte {
	inner := protoBytes(nil, 1, key)
	out := protoBytes(nil, 1, []byte(typeURL))
	out = protoBytes(out, 2, inner)
	clear(inner)
	return out
}

func protoBytes(out []byte, field int, b []byte) []byte {
	out = append(out, byte(field<<3|2))
	out = binary.AppendUvarint(out, uint64(len(b)))
	return append(out, b...)
}

// readField reads a length-delimited field number want from b.
func readField(b []byte, want int) (val, rest []byte, ok bool) {
	if len(b) < 2 || b[0] != byte(want<<3|2) {
		return nil, nil, false
	}
	n, k := binary.Uvarint(b[1:])
	if k <= 0 || n > uint64(len(b)-1-k) || k != len(binary.AppendUvarint(nil, n)) { // minimal lengths only
		return nil, nil, false
	}
	start := 1 + k
	return b[start : start+int(n)], b[start+int(n):], true
}

// parseAny splits amino Any bytes into the type URL and the key bytes.
func parseAny(b []byte) (typeURL string, key []byte, err error) {
	url, rest, ok := readField(b, 1)
	if !ok {
		return "", nil, armorErr(ArmorBadPayload, 0, "no amino type URL")
	}
	val, rest, ok := readField(rest, 2)
	if !ok || len(rest) != 0 {
		return "", nil, armorErr(ArmorBadPayload, 0, "malformed amino value")
	}
	key, rest, ok = readField(val, 1)
	if !ok || len(rest) != 0 {
		return "", nil, armorErr(ArmorBadPayload, 0, "malformed amino key bytes")
	}
	return string(url), key, nil
}

// quoted quotes a string read from a file for an error message, in ASCII
// and shortened.
func quoted(s string) string {
	if len(s) > 64 {
		s = s[:64]
	}
	return strconv.QuoteToASCII(s)
}

func (k *privateKey) amino() []byte {
	if k.alg == signer.Ed25519 {
		return anyBytes(typePrivEd25519, k.ed)
	}
	d := k.k1.Key.Bytes()
	defer clear(d[:])
	return anyBytes(typePrivSecp256k1, d[:])
}

// decodePrivate reads a private key from its amino bytes; the caller wipes
// b.
func decodePrivate(b []byte) (*privateKey, error) {
	url, key, err := parseAny(b)
	if err != nil {
		return nil, err
	}
	switch url {
	case typePrivEd25519:
		if len(key) != ed25519.PrivateKeySize {
			return nil, fmt.Errorf("keybase: Ed25519 key is %d bytes, want %d: %w", len(key), ed25519.PrivateKeySize, signer.ErrInvalidKey)
		}
		return fromPrivate(ed25519.PrivateKey(key))
	case typePrivSecp256k1:
		return secp256k1FromScalar(key)
	}
	return nil, &KeyTypeError{Type: quoted(url)}
}

func publicAmino(pub crypto.PublicKey) ([]byte, error) {
	switch p := pub.(type) {
	case ed25519.PublicKey:
		return anyBytes(typePubEd25519, p), nil
	case *ecdsa.PublicKey:
		k, err := secp256k1.ParsePubKey(append([]byte{4}, append(p.X.FillBytes(make([]byte, 32)), p.Y.FillBytes(make([]byte, 32))...)...))
		if err != nil {
			return nil, fmt.Errorf("keybase: %w: %w", signer.ErrInvalidKey, err)
		}
		return anyBytes(typePubSecp256k1, k.SerializeCompressed()), nil
	}
	return nil, fmt.Errorf("keybase: public key %T: %w", pub, signer.ErrUnsupported)
}

func decodePublic(b []byte) (signer.Algorithm, crypto.PublicKey, error) {
	url, key, err := parseAny(b)
	if err != nil {
		return 0, nil, err
	}
	switch url {
	case typePubEd25519:
		if len(key) != ed25519.PublicKeySize {
			return 0, nil, armorErr(ArmorBadPayload, 0, "Ed25519 public key of the wrong size")
		}
		return signer.Ed25519, append(ed25519.PublicKey(nil), key...), nil
	case typePubSecp256k1:
		if len(key) != 33 {
			return 0, nil, armorErr(ArmorBadPayload, 0, "secp256k1 public key not 33 bytes")
		}
		k, err := secp256k1.ParsePubKey(key)
		if err != nil {
			return 0, nil, armorErr(ArmorBadPayload, 0, "secp256k1 public key not on the curve")
		}
		return signer.ECDSASecp256k1, k.ToECDSA(), nil
	}
	return 0, nil, &KeyTypeError{Type: quoted(url)}
}

// sealedKey is a private key block as read: encrypted, or in the clear as
// gnokey writes it for an empty passphrase.
type sealedKey struct {
	plaintext bool
	salt      []byte
	cost      int
	data      []byte // nonce ‖ secretbox, or the amino key bytes
	raw       []byte // the block as read
}

// parseSealed checks a private key block's type and headers, without
// deriving any key.
func parseSealed(b block) (*sealedKey, error) {
	if b.Type != blockPrivate {
		return nil, armorErr(ArmorBlockType, b.line, quoted(b.Type)+", want "+strconv.Quote(blockPrivate))
	}
	s := &sealedKey{data: b.Data, raw: b.raw, cost: DefaultCost}
	if len(b.Headers) == 0 {
		s.plaintext = true
		return s, nil
	}
	for _, h := range b.Headers {
		switch h.Key {
		case "kdf", "salt", costHeader:
		default:
			return nil, armorErr(ArmorUnknownHeader, b.line, quoted(h.Key))
		}
	}
	if kdf, _ := b.header("kdf"); kdf != "bcrypt" {
		return nil, armorErr(ArmorUnknownKDF, b.line, "kdf "+quoted(kdf)+`, want "bcrypt"`)
	}
	salt, _ := b.header("salt")
	raw, err := hex.DecodeString(salt)
	if err != nil || len(raw) != saltSize {
		return nil, armorErr(ArmorBadSalt, b.line, "want 32 hex digits")
	}
	s.salt = raw
	if c, ok := b.header(costHeader); ok {
		n, err := strconv.Atoi(c)
		if err != nil || n < bcryptsalt.MinCost || n > bcryptsalt.MaxCost || strconv.Itoa(n) != c {
			return nil, armorErr(ArmorBadCost, b.line, fmt.Sprintf("want %d to %d", bcryptsalt.MinCost, bcryptsalt.MaxCost))
		}
		s.cost = n
	}
	if len(s.data) <= nonceSize+secretbox.Overhead {
		return nil, armorErr(ArmorBadPayload, b.line, "ciphertext too short")
	}
	return s, nil
}

// boxKey derives the secretbox key from the passphrase: SHA-256 of the
// 60-byte bcrypt string.
func boxKey(ctx context.Context, pass, salt []byte, cost int) (*[32]byte, error) {
	bc, err := bcryptsalt.Hash(ctx, pass, salt, cost)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("keybase: %w", ctxErr)
		}
		return nil, fmt.Errorf("keybase: bcrypt: %w", err)
	}
	k := sha256.Sum256(bc)
	clear(bc)
	return &k, nil
}

// open decrypts the key with pass. A wrong passphrase (or a ciphertext
// altered after it was written, which the cipher cannot tell apart) fails
// with an error wrapping signer.ErrWrongPassphrase.
func (s *sealedKey) open(ctx context.Context, pass []byte) (*privateKey, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("keybase: %w", err)
	}
	if s.plaintext {
		if len(pass) != 0 {
			return nil, fmt.Errorf("keybase: the key is stored unencrypted and opens only with an empty passphrase: %w", signer.ErrWrongPassphrase)
		}
		return decodePrivate(s.data)
	}
	k, err := boxKey(ctx, pass, s.salt, s.cost)
	if err != nil {
		return nil, err
	}
	plain, ok := openBox(s.data, k)
	clear(k[:])
	if !ok && len(pass) == 0 {
		// Some gnokey versions encrypted keys with an empty passphrase
		// under SHA-256 of nothing, skipping bcrypt; try that too.
		legacy := sha256.Sum256(nil)
		plain, ok = openBox(s.data, &legacy)
	}
	if !ok {
		return nil, errWrongPassphrase
	}
	defer clear(plain)
	return decodePrivate(plain)
}

func openBox(data []byte, key *[32]byte) ([]byte, bool) {
	var nonce [nonceSize]byte
	copy(nonce[:], data)
	return secretbox.Open(nil, data[nonceSize:], &nonce, key)
}

// seal encrypts k under pass at cost, as gnokey does: a private key block
// with kdf and salt headers (and cost, if not DefaultCost), or for an
// empty passphrase the unencrypted block gnokey writes. rnd gives the salt
// and then the nonce.
func seal(ctx context.Context, k *privateKey, pass []byte, cost int, rnd io.Reader) ([]byte, error) {
	plain := k.amino()
	defer clear(plain)
	if len(pass) == 0 {
		return encodeBlock(block{Type: blockPrivate, Data: plain}), nil
	}
	if cost == 0 {
		cost = DefaultCost
	}
	salt := make([]byte, saltSize)
	var nonce [nonceSize]byte
	if _, err := io.ReadFull(rnd, salt); err != nil {
		return nil, fmt.Errorf("keybase: salt: %w", err)
	}
	if _, err := io.ReadFull(rnd, nonce[:]); err != nil {
		return nil, fmt.Errorf("keybase: nonce: %w", err)
	}
	key, err := boxKey(ctx, pass, salt, cost)
	if err != nil {
		return nil, err
	}
	data := secretbox.Seal(nonce[:], plain, &nonce, key)
	clear(key[:])
	headers := []header{{"kdf", "bcrypt"}, {"salt", fmt.Sprintf("%X", salt)}}
	if cost != DefaultCost {
		headers = append(headers, header{costHeader, strconv.Itoa(cost)})
	}
	return encodeBlock(block{Type: blockPrivate, Headers: headers, Data: data}), nil
}

// parsePrivateArmor reads armor that holds one private key block and
// nothing else.
func parsePrivateArmor(armor []byte) (*sealedKey, error) {
	l := &lines{data: armor}
	b, err := decodeBlock(l)
	if err != nil {
		return nil, err
	}
	if err := checkEnd(l); err != nil {
		return nil, err
	}
	return parseSealed(b)
}

// EncryptArmor returns priv — an ed25519.PrivateKey, or an *ecdsa.PrivateKey
// on signer.Secp256k1() — encrypted under passphrase and armored as
// `gnokey export` writes it, with a fresh random salt and nonce. cost 0
// means DefaultCost, the only cost gnokey reads; other costs add a "cost"
// header that this package reads and gnokey ignores. An empty passphrase
// gives the unencrypted armor gnokey writes for one.
func EncryptArmor(ctx context.Context, priv crypto.PrivateKey, passphrase []byte, cost int) ([]byte, error) {
	k, err := fromPrivate(priv)
	if err != nil {
		return nil, err
	}
	defer k.wipe()
	return seal(ctx, k, passphrase, cost, rand.Reader)
}

// DecryptArmor reads a private key armored by gnokey or EncryptArmor and
// decrypts it with passphrase. It returns an ed25519.PrivateKey or a
// secp256k1 *ecdsa.PrivateKey, which the caller should wipe when done.
// Errors: *ArmorError for armor that cannot be read, *KeyTypeError for a
// key of another type, signer.ErrWrongPassphrase for the wrong passphrase.
func DecryptArmor(ctx context.Context, armor, passphrase []byte) (crypto.PrivateKey, error) {
	s, err := parsePrivateArmor(armor)
	if err != nil {
		return nil, err
	}
	k, err := s.open(ctx, passphrase)
	if err != nil {
		return nil, err
	}
	if k.alg == signer.Ed25519 {
		return k.ed, nil
	}
	defer k.wipe()
	return k.k1.ToECDSA(), nil
}
