package yubihsmsim

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/asn1"
	"errors"
	"io"
	"math/big"
	"time"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"

	"github.com/signerkit/signerkit/internal/eckey"
	"github.com/signerkit/signerkit/internal/secp256k1sign"
	"github.com/signerkit/signerkit/yubihsm"
)

// Asymmetric keys other than Ed25519: ECDSA on P-256, P-384 and
// secp256k1, and RSA of 2048, 3072 and 4096 bits, after Yubico's command
// reference (Put and Generate Asymmetric Key, Get Public Key, Sign ECDSA,
// Sign PKCS1, Sign PSS) and python-yubihsm's AsymmetricKey.

// The signing commands besides Sign EdDSA and Sign ECDSA.
const (
	CmdSignPKCS1 = 0x47
	CmdSignPSS   = 0x55
)

// Key and signing algorithms.
const (
	AlgRSAPKCS1SHA1   = 1
	AlgRSAPKCS1SHA256 = 2
	AlgRSAPKCS1SHA384 = 3
	AlgRSAPKCS1SHA512 = 4
	AlgRSAPSSSHA1     = 5
	AlgRSAPSSSHA256   = 6
	AlgRSAPSSSHA384   = 7
	AlgRSAPSSSHA512   = 8
	AlgRSA2048        = 9
	AlgRSA3072        = 10
	AlgRSA4096        = 11
	AlgP384           = 13
	AlgSecp256k1      = 15
	AlgMGF1SHA1       = 32
	AlgMGF1SHA256     = 33
	AlgMGF1SHA384     = 34
	AlgMGF1SHA512     = 35
)

// The RSA signing capabilities.
const (
	CapSignPKCS uint64 = 0x20
	CapSignPSS  uint64 = 0x40
)

// rsaBits is the modulus size of each RSA key algorithm, 0 for others.
func rsaBits(alg byte) int {
	switch alg {
	case AlgRSA2048:
		return 2048
	case AlgRSA3072:
		return 3072
	case AlgRSA4096:
		return 4096
	}
	return 0
}

// nistCurve is the curve of a P-256 or P-384 key algorithm, nil for others.
func nistCurve(alg byte) elliptic.Curve {
	switch alg {
	case AlgP256:
		return elliptic.P256()
	case AlgP384:
		return elliptic.P384()
	}
	return nil
}

// scalarLen is the private scalar size of an EC key algorithm, 0 for
// others.
func scalarLen(alg byte) int {
	switch alg {
	case AlgP256, AlgSecp256k1:
		return 32
	case AlgP384:
		return 48
	}
	return 0
}

var errKey = errors.New("yubihsmsim: bad key material")

// putKey sets o's key from Put Asymmetric Key's key material for o.alg: a
// 32-byte seed for Ed25519, the big-endian private scalar for an EC key,
// the primes p ‖ q (half the modulus size each) for RSA.
func putKey(o *object, key []byte) (yubihsm.ErrorCode, error) {
	switch n := scalarLen(o.alg); {
	case o.alg == AlgEd25519:
		if len(key) != seedSize {
			return yubihsm.CodeWrongLength, errKey
		}
		o.ed = edKeyFromSeed(key)
		return 0, nil
	case n != 0:
		if len(key) != n {
			return yubihsm.CodeWrongLength, errKey
		}
		return yubihsm.CodeInvalidData, ecFromScalar(o, key)
	case rsaBits(o.alg) != 0:
		half := rsaBits(o.alg) / 16
		if len(key) != 2*half {
			return yubihsm.CodeWrongLength, errKey
		}
		k, err := rsaFromPrimes(rsaBits(o.alg), key[:half], key[half:])
		o.rsa = k
		return yubihsm.CodeInvalidData, err
	}
	return yubihsm.CodeInvalidData, errKey
}

// ecFromScalar sets o's EC key from its scalar.
func ecFromScalar(o *object, d []byte) error {
	if o.alg == AlgSecp256k1 {
		k, ok := secp256k1sign.FromScalar(d)
		if !ok {
			return errKey
		}
		o.k1 = k
		return nil
	}
	k, err := ecdsa.ParseRawPrivateKey(nistCurve(o.alg), d)
	o.ec = k
	return err
}

// rsaFromPrimes builds the RSA key of the given size from its primes, with
// the public exponent 65537 the device uses.
func rsaFromPrimes(bits int, pb, qb []byte) (*rsa.PrivateKey, error) {
	p, q := new(big.Int).SetBytes(pb), new(big.Int).SetBytes(qb)
	one := big.NewInt(1)
	n := new(big.Int).Mul(p, q)
	if n.BitLen() != bits || p.Cmp(one) <= 0 || q.Cmp(one) <= 0 || p.Cmp(q) == 0 {
		return nil, errKey
	}
	e := big.NewInt(65537)
	pm, qm := new(big.Int).Sub(p, one), new(big.Int).Sub(q, one)
	phi := new(big.Int).Mul(pm, qm)
	d := new(big.Int).ModInverse(e, phi)
	if d == nil {
		return nil, errKey
	}
	k := &rsa.PrivateKey{PublicKey: rsa.PublicKey{N: n, E: 65537}, D: d, Primes: []*big.Int{p, q}}
	if err := k.Validate(); err != nil {
		return nil, errKey
	}
	k.Precompute()
	return k, nil
}

// generateKey sets o's key to a new one of o.alg.
func (d *Device) generateKey(o *object) (yubihsm.ErrorCode, error) {
	var err error
	switch {
	case o.alg == AlgEd25519:
		seed := make([]byte, seedSize)
		if _, err = io.ReadFull(d.rand, seed); err == nil {
			o.ed = edKeyFromSeed(seed)
		}
		clear(seed)
	case o.alg == AlgSecp256k1:
		d32 := make([]byte, 32)
		for ok := false; !ok && err == nil; {
			if _, err = io.ReadFull(d.rand, d32); err == nil {
				o.k1, ok = secp256k1sign.FromScalar(d32)
			}
		}
		clear(d32)
	case nistCurve(o.alg) != nil:
		o.ec, err = ecdsa.GenerateKey(nistCurve(o.alg), d.rand)
	case rsaBits(o.alg) != 0:
		o.rsa, err = rsa.GenerateKey(d.rand, rsaBits(o.alg))
	default:
		return yubihsm.CodeInvalidData, errKey
	}
	return yubihsm.CodeInvalidData, err
}

// asymPublic is Get Public Key's key data: the Ed25519 key, X ‖ Y of an
// EC point (no 04 prefix), or an RSA key's modulus.
func asymPublic(o *object) []byte {
	switch {
	case o.ed != nil:
		return o.ed.public()
	case o.k1 != nil:
		return o.k1.PubKey().SerializeUncompressed()[1:]
	case o.rsa != nil:
		return o.rsa.N.FillBytes(make([]byte, o.rsa.Size()))
	}
	pt, err := o.ec.PublicKey.Bytes() // 04 ‖ X ‖ Y
	if err != nil {
		panic("yubihsmsim: an invalid EC key in an object: " + err.Error()) // every key is made valid
	}
	return pt[1:]
}

// asymKeySize is what Get Object Info reports as an asymmetric key's
// size: the Ed25519 seed's or EC scalar's size, or the modulus's.
func asymKeySize(o *object) uint16 {
	switch {
	case o.ed != nil:
		return seedSize
	case o.rsa != nil:
		return uint16(o.rsa.Size())
	}
	return uint16(scalarLen(o.alg))
}

// asymWrapped is an asymmetric key's material under wrap: Ed25519 in
// yubihsm-wrap's form (edKey.wrapped), an EC key as d ‖ X ‖ Y, an RSA key
// as p ‖ q (the sim's own form for RSA: Put Asymmetric Key's).
func asymWrapped(o *object) []byte {
	switch {
	case o.ed != nil:
		return o.ed.wrapped()
	case o.rsa != nil:
		half := o.rsa.Size() / 2
		out := make([]byte, 2*half)
		o.rsa.Primes[0].FillBytes(out[:half])
		o.rsa.Primes[1].FillBytes(out[half:])
		return out
	}
	n := scalarLen(o.alg)
	body := make([]byte, 3*n)
	if o.k1 != nil {
		s := o.k1.Key.Bytes()
		copy(body, s[:])
		clear(s[:])
	} else {
		eckey.Scalar(o.ec).FillBytes(body[:n])
	}
	copy(body[n:], asymPublic(o))
	return body
}

// asymFromWrapped sets o's key from its material under wrap (asymWrapped's
// form), checking an EC key's public point against its scalar.
func asymFromWrapped(o *object, body []byte) error {
	var err error
	switch n := scalarLen(o.alg); {
	case o.alg == AlgEd25519:
		o.ed, err = edKeyFromWrapped(body)
	case n != 0:
		if len(body) != 3*n {
			return errKey
		}
		if err = ecFromScalar(o, body[:n]); err == nil && string(asymPublic(o)) != string(body[n:]) {
			err = errKey
		}
	case rsaBits(o.alg) != 0:
		half := rsaBits(o.alg) / 16
		if len(body) != 2*half {
			return errKey
		}
		o.rsa, err = rsaFromPrimes(rsaBits(o.alg), body[:half], body[half:])
	default:
		err = errKey
	}
	return err
}

// digestHash is the hash whose digest has n bytes, as Sign PKCS1 and Sign
// PSS tell it (they take the digest, not the message), with its
// signing-algorithm offset (0 for SHA-1 to 3 for SHA-512).
func digestHash(n int) (crypto.Hash, byte, bool) {
	switch n {
	case 20:
		return crypto.SHA1, 0, true
	case 32:
		return crypto.SHA256, 1, true
	case 48:
		return crypto.SHA384, 2, true
	case 64:
		return crypto.SHA512, 3, true
	}
	return 0, 0, false
}

// signECDSA signs a digest (1 to 64 bytes; the curve takes its leftmost
// bits) with an EC key, in DER. A secp256k1 signature is left as the
// device leaves it: its S is high about half the time (the sim turns a
// deterministic low-S signature into its high-S twin on a coin flip from
// the device's randomness), so hosts must lower it themselves.
func (d *Device) signECDSA(o *object, digest []byte) ([]byte, error) {
	if o.k1 == nil {
		return ecdsa.SignASN1(rand.Reader, o.ec, digest)
	}
	der := secp256k1sign.SignASN1(o.k1, digest)
	var coin [1]byte
	if _, err := io.ReadFull(d.rand, coin[:]); err != nil {
		return nil, err
	}
	if coin[0]&1 == 0 {
		return der, nil
	}
	return highS(der)
}

// highS turns a low-S secp256k1 signature in DER into its high-S twin
// (r, n − s), which verifies as well.
func highS(der []byte) ([]byte, error) {
	r, s, err := parseDER(der)
	if err != nil {
		return nil, err
	}
	s.Sub(secp256k1.Params().N, s)
	return marshalDER(r, s)
}

// ecdsaTime is the modeled time of Sign ECDSA with a key of alg.
func (p *Profile) ecdsaTime(alg byte) time.Duration {
	switch alg {
	case AlgP384:
		return p.ECDSAP384
	case AlgSecp256k1:
		return p.ECDSASecp256k1
	}
	return p.ECDSAP256
}

// rsaTime is the modeled time of an RSA signature with a key of bits.
func (p *Profile) rsaTime(bits int) time.Duration {
	switch bits {
	case 3072:
		return p.RSA3072
	case 4096:
		return p.RSA4096
	}
	return p.RSA2048
}

// signRSA answers Sign PKCS1 (key id, digest) and Sign PSS (key id, MGF1
// algorithm, salt length, digest). The hash is the one whose digest has
// the length given; PSS takes MGF1 with any of the four hashes and a salt
// of 0 up to the longest that fits (python-yubihsm's device tests sign
// with both ends). The key needs sign-pkcs or sign-pss, as does the
// session's key.
func (d *Device) signRSA(s *session, cmd byte, p []byte) ([]byte, time.Duration) {
	if len(p) < 2 {
		return errFrame(yubihsm.CodeWrongLength), 0
	}
	o := d.objects[objKey{TypeAsymmetric, uint16(p[0])<<8 | uint16(p[1])}]
	if o == nil || !visible(s, o) {
		return errFrame(yubihsm.CodeObjectNotFound), 0
	}
	if o.rsa == nil {
		return errFrame(yubihsm.CodeInvalidCommand), 0
	}
	need, base, digest := CapSignPKCS, byte(AlgRSAPKCS1SHA1), p[2:]
	var mgf byte
	var salt int
	if cmd == CmdSignPSS {
		if len(p) < 5 {
			return errFrame(yubihsm.CodeWrongLength), 0
		}
		need, base, mgf, salt, digest = CapSignPSS, AlgRSAPSSSHA1, p[2], int(p[3])<<8|int(p[4]), p[5:]
	}
	if o.caps&need == 0 || s.auth.caps&need == 0 {
		return errFrame(yubihsm.CodeInsufficientPermissions), 0
	}
	h, off, ok := digestHash(len(digest))
	if !ok {
		return errFrame(yubihsm.CodeWrongLength), 0
	}
	if d.algorithmOff(o.alg) || d.algorithmOff(base+off) {
		return errFrame(yubihsm.CodeAlgorithmDisabled), 0
	}
	var sig []byte
	var err error
	if cmd == CmdSignPSS {
		mgfHash := mgf1Hash(mgf)
		if mgfHash == 0 || salt > o.rsa.Size()-h.Size()-2 {
			return errFrame(yubihsm.CodeInvalidData), 0
		}
		sig, err = d.signPSS(o.rsa, h, mgfHash, digest, salt)
	} else {
		sig, err = rsa.SignPKCS1v15(nil, o.rsa, h, digest)
	}
	if err != nil {
		return errFrame(yubihsm.CodeInvalidData), 0
	}
	d.stats.Signs++
	return okFrame(cmd, sig), d.profile.rsaTime(o.rsa.N.BitLen())
}

type derSig struct{ R, S *big.Int }

func parseDER(der []byte) (r, s *big.Int, err error) {
	var v derSig
	if _, err := asn1.Unmarshal(der, &v); err != nil {
		return nil, nil, err
	}
	return v.R, v.S, nil
}

func marshalDER(r, s *big.Int) ([]byte, error) { return asn1.Marshal(derSig{r, s}) }
