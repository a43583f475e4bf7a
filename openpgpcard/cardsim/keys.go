package cardsim

import (
	"bytes"
	"crypto"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/big"

	"github.com/signerkit/signerkit/openpgpcard/internal/iso7816"
)

// Slot is one of the card's three keys.
type Slot uint8

const (
	// SlotSign is the signature key (control reference template B6,
	// attributes C1), used by PSO:COMPUTE DIGITAL SIGNATURE.
	SlotSign Slot = iota
	// SlotDecrypt is the decryption key (B8, C2), used by PSO:DECIPHER.
	SlotDecrypt
	// SlotAuth is the authentication key (A4, C3), used by INTERNAL
	// AUTHENTICATE.
	SlotAuth
)

// String returns "sign", "decrypt" or "auth".
func (s Slot) String() string {
	switch s {
	case SlotSign:
		return "sign"
	case SlotDecrypt:
		return "decrypt"
	case SlotAuth:
		return "auth"
	}
	return fmt.Sprintf("Slot(%d)", uint8(s))
}

// crt is the control reference template tag of each slot.
var crt = [3]byte{0xB6, 0xB8, 0xA4}

func slotOfCRT(b byte) (Slot, bool) {
	for i, t := range crt {
		if t == b {
			return Slot(i), true
		}
	}
	return 0, false
}

// Algorithm is a key's algorithm attributes, as the card stores them in
// C1–C3 (OpenPGP card specification v3.4, section 4.4.3.9).
type Algorithm uint8

const (
	// RSA2048 and RSA4096: RSA with a 32-bit public exponent field.
	RSA2048 Algorithm = iota + 1
	RSA4096
	// ECDSAP256 is ECDSA on NIST P-256 (algorithm id 0x13).
	ECDSAP256
	// EdDSA25519 is EdDSA on Ed25519 (0x16).
	EdDSA25519
	// ECDHP256 is ECDH on NIST P-256 (0x12), for the decryption slot.
	ECDHP256
	// ECDHX25519 is ECDH on Curve25519 (0x12), for the decryption slot.
	ECDHX25519
)

// OIDs of the curves, as in the attributes.
var (
	oidP256    = []byte{0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07}
	oidEd25519 = []byte{0x2B, 0x06, 0x01, 0x04, 0x01, 0xDA, 0x47, 0x0F, 0x01}
	oidX25519  = []byte{0x2B, 0x06, 0x01, 0x04, 0x01, 0x97, 0x55, 0x01, 0x05, 0x01}
)

// String names the algorithm.
func (a Algorithm) String() string {
	switch a {
	case RSA2048:
		return "rsa2048"
	case RSA4096:
		return "rsa4096"
	case ECDSAP256:
		return "ecdsa-p256"
	case EdDSA25519:
		return "ed25519"
	case ECDHP256:
		return "ecdh-p256"
	case ECDHX25519:
		return "cv25519"
	}
	return fmt.Sprintf("Algorithm(%d)", uint8(a))
}

// Attributes returns the algorithm attributes data object's value.
func (a Algorithm) Attributes() []byte {
	switch a {
	case RSA2048, RSA4096:
		bits := 2048
		if a == RSA4096 {
			bits = 4096
		}
		return []byte{0x01, byte(bits >> 8), byte(bits), 0x00, 0x20, 0x00}
	case ECDSAP256:
		return append([]byte{0x13}, oidP256...)
	case EdDSA25519:
		return append([]byte{0x16}, oidEd25519...)
	case ECDHP256:
		return append([]byte{0x12}, oidP256...)
	case ECDHX25519:
		return append([]byte{0x12}, oidX25519...)
	}
	return nil
}

// ParseAttributes returns the algorithm an attributes value names, and
// false for one the simulator does not implement. A trailing import-format
// byte (0x00 or 0xFF after an OID) is accepted.
func ParseAttributes(b []byte) (Algorithm, bool) {
	if len(b) == 0 {
		return 0, false
	}
	if b[0] == 0x01 {
		if len(b) < 5 || binary.BigEndian.Uint16(b[3:5]) != 32 || len(b) > 6 {
			return 0, false
		}
		switch binary.BigEndian.Uint16(b[1:3]) {
		case 2048:
			return RSA2048, true
		case 4096:
			return RSA4096, true
		}
		return 0, false
	}
	oid := b[1:]
	if n := len(oid); n > 0 && (oid[n-1] == 0x00 || oid[n-1] == 0xFF) && !bytes.Equal(oid, oidEd25519) && !bytes.Equal(oid, oidX25519) {
		oid = oid[:n-1]
	}
	switch {
	case b[0] == 0x13 && bytes.Equal(oid, oidP256):
		return ECDSAP256, true
	case b[0] == 0x16 && bytes.Equal(oid, oidEd25519):
		return EdDSA25519, true
	case b[0] == 0x12 && bytes.Equal(oid, oidP256):
		return ECDHP256, true
	case b[0] == 0x12 && bytes.Equal(oid, oidX25519):
		return ECDHX25519, true
	}
	return 0, false
}

// signs reports whether a key of this algorithm signs (PSO:CDS, INTERNAL
// AUTHENTICATE); deciphers whether it deciphers.
func (a Algorithm) signs() bool { return a != ECDHP256 && a != ECDHX25519 }
func (a Algorithm) deciphers() bool {
	return a == RSA2048 || a == RSA4096 || a == ECDHP256 || a == ECDHX25519
}

// key is a slot's private key.
type key struct {
	alg    Algorithm
	rsa    *rsa.PrivateKey
	ecdsa  *ecdsa.PrivateKey
	ed     ed25519.PrivateKey
	ecdh   *ecdh.PrivateKey
	source byte // key information DE: 1 generated, 2 imported
}

// errNoKey and errBadInput become status words.
var (
	errBadInput = errors.New("incorrect data")
	errNotHere  = errors.New("conditions of use not satisfied")
)

func generate(a Algorithm, r io.Reader) (*key, error) {
	k := &key{alg: a, source: 1}
	var err error
	switch a {
	case RSA2048:
		k.rsa, err = rsa.GenerateKey(r, 2048)
	case RSA4096:
		k.rsa, err = rsa.GenerateKey(r, 4096)
	case ECDSAP256:
		k.ecdsa, err = ecdsa.GenerateKey(elliptic.P256(), r)
	case EdDSA25519:
		_, k.ed, err = ed25519.GenerateKey(r)
	case ECDHP256:
		k.ecdh, err = ecdh.P256().GenerateKey(r)
	case ECDHX25519:
		k.ecdh, err = ecdh.X25519().GenerateKey(r)
	default:
		err = errBadInput
	}
	return k, err
}

// keyFromSigner makes a key from a crypto private key, for ImportKey.
func keyFromSigner(priv crypto.PrivateKey, decrypt bool) (*key, error) {
	k := &key{source: 2}
	switch p := priv.(type) {
	case *rsa.PrivateKey:
		switch p.N.BitLen() {
		case 2048:
			k.alg = RSA2048
		case 4096:
			k.alg = RSA4096
		default:
			return nil, fmt.Errorf("cardsim: %d-bit RSA key: the card holds 2048 or 4096 bits", p.N.BitLen())
		}
		k.rsa = p
	case *ecdsa.PrivateKey:
		if p.Curve != elliptic.P256() {
			return nil, fmt.Errorf("cardsim: ECDSA key on %s: only P-256", p.Curve.Params().Name)
		}
		k.alg, k.ecdsa = ECDSAP256, p
		if decrypt {
			e, err := p.ECDH()
			if err != nil {
				return nil, err
			}
			k.alg, k.ecdsa, k.ecdh = ECDHP256, nil, e
		}
	case ed25519.PrivateKey:
		k.alg, k.ed = EdDSA25519, p
	case *ecdh.PrivateKey:
		if p.Curve() != ecdh.X25519() {
			return nil, errors.New("cardsim: ECDH key: only X25519 (P-256 comes as *ecdsa.PrivateKey)")
		}
		k.alg, k.ecdh = ECDHX25519, p
	default:
		return nil, fmt.Errorf("cardsim: unsupported key type %T", priv)
	}
	return k, nil
}

// publicTemplate is the public key data object 7F49 (section 7.2.14).
func (k *key) publicTemplate() []byte {
	var v []byte
	switch {
	case k.rsa != nil:
		v = iso7816.AppendTLV(v, 0x81, k.rsa.N.Bytes())
		v = iso7816.AppendTLV(v, 0x82, big.NewInt(int64(k.rsa.E)).Bytes())
	case k.ecdsa != nil:
		e, _ := k.ecdsa.PublicKey.ECDH() // P-256 always converts
		v = iso7816.AppendTLV(v, 0x86, e.Bytes())
	case k.ed != nil:
		v = iso7816.AppendTLV(v, 0x86, k.ed.Public().(ed25519.PublicKey))
	case k.ecdh != nil:
		v = iso7816.AppendTLV(v, 0x86, k.ecdh.PublicKey().Bytes())
	}
	return iso7816.TLVBytes(0x7F49, v)
}

// sign is PSO:CDS and INTERNAL AUTHENTICATE: RSA pads the DigestInfo (or
// authentication input) with PKCS #1 v1.5 type 1, ECDSA signs the hash
// given and returns r‖s, EdDSA signs the whole message.
func (k *key) sign(r io.Reader, in []byte) ([]byte, error) {
	switch {
	case k.rsa != nil:
		if len(in) > k.rsa.Size()*40/100 {
			return nil, errBadInput
		}
		return rsa.SignPKCS1v15(nil, k.rsa, crypto.Hash(0), in)
	case k.ecdsa != nil:
		if len(in) == 0 || len(in) > 64 {
			return nil, errBadInput
		}
		rr, s, err := ecdsa.Sign(r, k.ecdsa, in)
		if err != nil {
			return nil, err
		}
		out := make([]byte, 64)
		rr.FillBytes(out[:32])
		s.FillBytes(out[32:])
		return out, nil
	case k.ed != nil:
		return ed25519.Sign(k.ed, in), nil
	}
	return nil, errNotHere
}

// decipher is PSO:DECIPHER: RSA takes a padding indicator byte 0x00 and the
// ciphertext and removes PKCS #1 v1.5 type 2 padding; ECDH takes the
// cipher DO A6 { 7F49 { 86 point } } and returns the shared secret.
func (k *key) decipher(in []byte) ([]byte, error) {
	switch {
	case k.rsa != nil:
		if len(in) != 1+k.rsa.Size() || in[0] != 0x00 {
			return nil, errBadInput
		}
		//lint:ignore SA1019 the OpenPGP card specification (7.2.11) has the card remove PKCS #1 v1.5 padding; the simulator does what the card does
		out, err := rsa.DecryptPKCS1v15(nil, k.rsa, in[1:])
		if err != nil {
			return nil, errBadInput
		}
		return out, nil
	case k.ecdh != nil:
		point, ok := iso7816.Find(in, 0x86)
		if !ok {
			return nil, errBadInput
		}
		pub, err := k.ecdh.Curve().NewPublicKey(point)
		if err != nil {
			return nil, errBadInput
		}
		secret, err := k.ecdh.ECDH(pub)
		if err != nil {
			return nil, errBadInput
		}
		return secret, nil
	}
	return nil, errNotHere
}

// defaultRand is the card's randomness.
var defaultRand io.Reader = rand.Reader
