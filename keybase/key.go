package keybase

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"

	"github.com/signerkit/signerkit/internal/eckey"
	"github.com/signerkit/signerkit/internal/ed25519sign"
	"github.com/signerkit/signerkit/internal/secp256k1sign"
	"github.com/signerkit/signerkit/signer"
)

// The amino "Any" type URLs of tm2's keys (docs/protocols.md C.3).
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

// privateKey is a decrypted key, owned: wipe clears it. An Ed25519 key is
// held once, expanded for signing (x), which keeps the seed and public key
// its amino form needs: Ed25519 signs go through ed25519sign, never
// crypto/ed25519, whose key cache would keep a copy of the seed that no
// wipe reaches.
type privateKey struct {
	alg signer.Algorithm
	x   *ed25519sign.PrivateKey
	k1  *secp256k1.PrivateKey
}

func (k *privateKey) public() crypto.PublicKey {
	if k.alg == signer.Ed25519 {
		return ed25519.PublicKey(k.x.Public())
	}
	return k.k1.PubKey().ToECDSA()
}

func (k *privateKey) wipe() {
	if k == nil {
		return
	}
	if k.x != nil {
		k.x.Wipe()
	}
	if k.k1 != nil {
		k.k1.Zero()
	}
}

// ed25519 returns an Ed25519 key in crypto/ed25519's form, seed‖public
// key, in a new slice the caller wipes.
func (k *privateKey) ed25519() ed25519.PrivateKey {
	return k.x.AppendPrivateKey(make([]byte, 0, ed25519.PrivateKeySize))
}

// signEd25519 signs msg with the expanded key.
func (k *privateKey) signEd25519(msg []byte) []byte { return k.x.Sign(msg) }

// fromPrivate makes an owned copy of an ed25519.PrivateKey or a
// secp256k1 *ecdsa.PrivateKey.
func fromPrivate(priv crypto.PrivateKey) (*privateKey, error) {
	switch p := priv.(type) {
	case ed25519.PrivateKey:
		if len(p) != ed25519.PrivateKeySize {
			return nil, fmt.Errorf("keybase: Ed25519 private key is %d bytes, want %d: %w", len(p), ed25519.PrivateKeySize, signer.ErrInvalidKey)
		}
		// Expanded by ed25519sign, no copy left behind, as
		// ed25519.NewKeyFromSeed (or p.Seed()) would leave.
		x := new(ed25519sign.PrivateKey)
		if err := x.SetPrivateKey(p); err != nil {
			return nil, fmt.Errorf("keybase: Ed25519 public key is not the one its seed gives: %w", signer.ErrInvalidKey)
		}
		return &privateKey{alg: signer.Ed25519, x: x}, nil
	case *ecdsa.PrivateKey:
		if p == nil || eckey.Scalar(p) == nil || p.Curve != signer.Secp256k1() {
			return nil, fmt.Errorf("keybase: only secp256k1 ECDSA keys are supported: %w", signer.ErrUnsupported)
		}
		if pd := eckey.Scalar(p); pd.Sign() <= 0 || pd.BitLen() > 256 {
			return nil, fmt.Errorf("keybase: secp256k1 scalar out of range: %w", signer.ErrInvalidKey)
		}
		d := eckey.Scalar(p).FillBytes(make([]byte, 32))
		defer clear(d)
		k, err := secp256k1FromScalar(d)
		if err != nil {
			return nil, err
		}
		if px, _ := eckey.Coordinates(&p.PublicKey); px != nil && !p.PublicKey.Equal(k.public()) {
			k.wipe()
			return nil, fmt.Errorf("keybase: secp256k1 private key does not match its public key: %w", signer.ErrInvalidKey)
		}
		return k, nil
	}
	return nil, fmt.Errorf("keybase: %T is not a key gnokey holds (ed25519.PrivateKey or secp256k1 *ecdsa.PrivateKey): %w", priv, signer.ErrUnsupported)
}

func secp256k1FromScalar(d []byte) (*privateKey, error) {
	k, ok := secp256k1sign.FromScalar(d)
	if !ok {
		return nil, fmt.Errorf("keybase: secp256k1 scalar is not 32 bytes in [1, n-1]: %w", signer.ErrInvalidKey)
	}
	return &privateKey{alg: signer.ECDSASecp256k1, k1: k}, nil
}

// generate makes a new key for alg.
func generate(alg signer.Algorithm) (*privateKey, error) {
	switch alg {
	case signer.Ed25519:
		// Not ed25519.GenerateKey, which leaves its seed buffer and an
		// expanded key behind unwiped.
		seed := make([]byte, ed25519.SeedSize)
		defer clear(seed)
		if _, err := rand.Read(seed); err != nil {
			return nil, fmt.Errorf("keybase: %w", err)
		}
		x := new(ed25519sign.PrivateKey)
		x.SetSeed(seed) // cannot fail: 32 bytes
		return &privateKey{alg: alg, x: x}, nil
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
		ed := k.ed25519()
		defer clear(ed)
		return anyBytes(typePrivEd25519, ed)
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
		x, y := eckey.Coordinates(p)
		k, err := secp256k1.ParsePubKey(append([]byte{4}, append(x.FillBytes(make([]byte, 32)), y.FillBytes(make([]byte, 32))...)...))
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
