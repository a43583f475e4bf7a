package pkcs11_test

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/asn1"
	"encoding/hex"
	"errors"
	"math/big"
	"testing"

	"github.com/signerkit/signerkit/pkcs11"
	"github.com/signerkit/signerkit/signer"
)

func unhex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

func TestECParams(t *testing.T) {
	for in, want := range map[string]signer.Algorithm{
		"06032b6570":                   signer.Ed25519,   // OID 1.3.101.112
		"130c656477617264733235353139": signer.Ed25519,   // PrintableString "edwards25519", as pkcs11-tool writes it
		"06082a8648ce3d030107":         signer.ECDSAP256, // prime256v1
		"06052b81040022":               signer.ECDSAP384, // secp384r1
	} {
		got, err := pkcs11.ParseECParams(unhex(in))
		if err != nil || got != want {
			t.Errorf("ParseECParams(%s) = %v, %v; want %v", in, got, err, want)
		}
	}
	for in, want := range map[string]error{
		"06052b8104000a":                 signer.ErrUnsupported, // secp256k1
		"06032b6571":                     signer.ErrUnsupported, // Ed448
		"130c6564776172647332":           signer.ErrInvalidKey,  // cut
		"130c65647761726473323535313900": signer.ErrInvalidKey,  // trailing byte
		"130125":                         signer.ErrInvalidKey,  // '%' is not printable
		"0c0c656477617264733235353139":   signer.ErrInvalidKey,  // UTF8String, not PrintableString
		"":                               signer.ErrInvalidKey,
	} {
		if got, err := pkcs11.ParseECParams(unhex(in)); !errors.Is(err, want) {
			t.Errorf("ParseECParams(%s) = %v, %v; want %v", in, got, err, want)
		}
	}
}

func TestECPoint(t *testing.T) {
	edPub, _, _ := ed25519.GenerateKey(rand.Reader)
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	for _, c := range []struct {
		alg signer.Algorithm
		pub crypto.PublicKey
	}{{signer.Ed25519, edPub}, {signer.ECDSAP256, &p256.PublicKey}, {signer.ECDSAP384, &p384.PublicKey}} {
		der, err := pkcs11.MarshalECPoint(c.pub)
		if err != nil {
			t.Fatal(err)
		}
		var bare []byte
		asn1.Unmarshal(der, &bare)
		for _, form := range [][]byte{der, bare} { // some tokens store the bare point
			got, err := pkcs11.ParseECPoint(c.alg, form)
			if err != nil || !got.(interface{ Equal(crypto.PublicKey) bool }).Equal(c.pub) {
				t.Errorf("%v: ParseECPoint(%x) = %v, %v", c.alg, form, got, err)
			}
		}
	}
	// A point off the curve, and a short Ed25519 key.
	bad, _ := pkcs11.MarshalECPoint(&p256.PublicKey)
	bad[len(bad)-1] ^= 1
	if _, err := pkcs11.ParseECPoint(signer.ECDSAP256, bad); !errors.Is(err, signer.ErrInvalidKey) {
		t.Errorf("point off the curve: %v", err)
	}
	if _, err := pkcs11.ParseECPoint(signer.Ed25519, unhex("041f"+hex.EncodeToString(make([]byte, 31)))); !errors.Is(err, signer.ErrInvalidKey) {
		t.Errorf("31-byte Ed25519 point: %v", err)
	}
}

func TestDigestInfo(t *testing.T) {
	// CKM_RSA_PKCS over our DigestInfo must be what crypto/rsa signs.
	key := rsa2048(t)
	d := sha256.Sum256([]byte("m"))
	di, err := pkcs11.DigestInfoFor(crypto.SHA256, d[:])
	if err != nil {
		t.Fatal(err)
	}
	want := unhex("3031300d060960864801650304020105000420")
	if !bytes.Equal(di[:len(want)], want) || !bytes.Equal(di[len(want):], d[:]) {
		t.Errorf("SHA-256 DigestInfo %x, want the RFC 8017 prefix %x and the digest", di, want)
	}
	sig, _ := rsa.SignPKCS1v15(rand.Reader, key, crypto.Hash(0), di) // raw PKCS #1 v1.5 padding, as CKM_RSA_PKCS
	if err := rsa.VerifyPKCS1v15(&key.PublicKey, crypto.SHA256, d[:], sig); err != nil {
		t.Error(err)
	}
	if _, err := pkcs11.DigestInfoFor(crypto.MD5, make([]byte, 16)); !errors.Is(err, signer.ErrUnsupported) {
		t.Errorf("MD5: %v", err)
	}
}

func FuzzRawToASN1(f *testing.F) {
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	d := sha256.Sum256([]byte("seed"))
	der, _ := ecdsa.SignASN1(rand.Reader, p256, d[:])
	raw, _ := signer.ECDSAToRaw(signer.ECDSAP256, der)
	f.Add(uint8(signer.ECDSAP256), raw)
	f.Add(uint8(signer.ECDSAP384), make([]byte, 96))
	f.Add(uint8(signer.ECDSAP256), append(bytes.Repeat([]byte{0xff}, 32), raw[32:]...))
	f.Add(uint8(signer.ECDSAP256), raw[:63])
	f.Fuzz(func(t *testing.T, a uint8, raw []byte) {
		alg := signer.ECDSAP256
		if a%2 == 1 {
			alg = signer.ECDSAP384
		}
		der, err := pkcs11.RawToASN1(alg, raw)
		if err != nil {
			if !errors.Is(err, signer.ErrProtocol) {
				t.Fatalf("RawToASN1(%v, %x): %v does not wrap ErrProtocol", alg, raw, err)
			}
			return
		}
		back, err := signer.ECDSAToRaw(alg, der)
		if err != nil || !bytes.Equal(back, raw) {
			t.Fatalf("RawToASN1(%v, %x) = %x, which converts back to %x, %v", alg, raw, der, back, err)
		}
		var v struct{ R, S *big.Int }
		if rest, err := asn1.Unmarshal(der, &v); err != nil || len(rest) != 0 {
			t.Fatalf("RawToASN1 gave malformed DER %x", der)
		}
	})
}

func FuzzParseECPoint(f *testing.F) {
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	pt, _ := pkcs11.MarshalECPoint(&p256.PublicKey)
	edPub, _, _ := ed25519.GenerateKey(rand.Reader)
	ed, _ := pkcs11.MarshalECPoint(edPub)
	f.Add(uint8(signer.ECDSAP256), pt)
	f.Add(uint8(signer.Ed25519), ed)
	f.Add(uint8(signer.ECDSAP384), pt)
	for _, h := range smallOrderEd25519 {
		f.Add(uint8(signer.Ed25519), unhex(h))
	}
	f.Add(uint8(signer.ECDSAP256), unhex("0441"))
	f.Add(uint8(signer.Ed25519), unhex("0420"+hex.EncodeToString(edPub)+"00"))
	f.Fuzz(func(t *testing.T, a uint8, in []byte) {
		alg := []signer.Algorithm{signer.Ed25519, signer.ECDSAP256, signer.ECDSAP384}[int(a)%3]
		pub, err := pkcs11.ParseECPoint(alg, in)
		if err != nil {
			if !errors.Is(err, signer.ErrInvalidKey) {
				t.Fatalf("ParseECPoint(%v, %x): %v does not wrap ErrInvalidKey", alg, in, err)
			}
			return
		}
		if err := alg.CheckKey(pub); err != nil {
			t.Fatalf("ParseECPoint(%v, %x) = %v: %v", alg, in, pub, err)
		}
		if ed, ok := pub.(ed25519.PublicKey); ok {
			if err := signer.CheckEd25519PublicKey(ed); err != nil {
				t.Fatalf("ParseECPoint(%v, %x) accepted %x: %v", alg, in, []byte(ed), err)
			}
		}
		if _, err := pkcs11.MarshalECPoint(pub); err != nil {
			t.Fatal(err)
		}
	})
}

func FuzzParseECParams(f *testing.F) {
	for _, s := range []string{"06032b6570", "130c656477617264733235353139", "06082a8648ce3d030107", "06052b81040022",
		"06052b8104000a", "06032b6571", "130c6564776172647332", "0c0c656477617264733235353139", "0680", "06", "1300", "3000"} {
		f.Add(unhex(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		alg, err := pkcs11.ParseECParams(in)
		if err == nil && alg != signer.Ed25519 && alg != signer.ECDSAP256 && alg != signer.ECDSAP384 {
			t.Fatalf("ParseECParams(%x) = %v", in, alg)
		}
		if err != nil && !errors.Is(err, signer.ErrInvalidKey) && !errors.Is(err, signer.ErrUnsupported) {
			t.Fatalf("ParseECParams(%x): %v", in, err)
		}
	})
}

// smallOrderEd25519 are Ed25519 public keys no signer may present: the
// eight points of small order (some in two encodings), and non-canonical
// encodings. crypto/ed25519 verifies without the cofactor, so with one of
// them a constant signature verifies for every message.
var smallOrderEd25519 = []string{
	"0100000000000000000000000000000000000000000000000000000000000000", // the identity
	"ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // order 2
	"0000000000000000000000000000000000000000000000000000000000000000", // order 4
	"0000000000000000000000000000000000000000000000000000000000000080", // order 4
	"c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a", // order 8
	"c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa", // order 8
	"26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05", // order 8
	"26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85", // order 8
	"0100000000000000000000000000000000000000000000000000000000000080", // the identity, x's sign set on x = 0
	"eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // y = p+1: the identity, not canonical
	"edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // y = p: not canonical
}

// TestECPointEd25519SmallOrder: a token's CKA_EC_POINT that is a
// small-order or non-canonical Ed25519 key is refused, wrapped or bare.
func TestECPointEd25519SmallOrder(t *testing.T) {
	for _, h := range smallOrderEd25519 {
		pt := unhex(h)
		der, _ := asn1.Marshal(pt)
		for _, form := range [][]byte{der, pt} {
			if pub, err := pkcs11.ParseECPoint(signer.Ed25519, form); !errors.Is(err, signer.ErrInvalidKey) {
				t.Errorf("ParseECPoint(Ed25519, %x) = %x, %v; want ErrInvalidKey", form, pub, err)
			}
		}
	}
}

func TestRSAPublic(t *testing.T) {
	key := rsa2048(t)
	e := big.NewInt(int64(key.E)).Bytes()
	pub, err := pkcs11.RSAPublic(append([]byte{0, 0}, key.N.Bytes()...), e)
	if err != nil || !pub.Equal(&key.PublicKey) {
		t.Fatalf("RSAPublic of a 2048-bit key: %v, %v", pub, err)
	}
	even := new(big.Int).SetBit(key.N, 0, 0)
	huge := new(big.Int).Lsh(big.NewInt(1), 16384) // 16385 bits
	huge.SetBit(huge, 0, 1)
	for _, c := range []struct {
		name string
		n, e []byte
		want error
	}{
		{"even modulus", even.Bytes(), e, signer.ErrInvalidKey},
		{"1024 bits", key.N.Bytes()[128:], e, signer.ErrUnsupported},
		{"16385 bits", huge.Bytes(), e, signer.ErrUnsupported},
		{"no modulus", nil, e, signer.ErrUnsupported},
		{"exponent 1", key.N.Bytes(), []byte{1}, signer.ErrInvalidKey},
		{"even exponent", key.N.Bytes(), []byte{1, 0, 0}, signer.ErrInvalidKey},
		{"no exponent", key.N.Bytes(), nil, signer.ErrInvalidKey},
		{"exponent 2^31+1", key.N.Bytes(), []byte{0x80, 0, 0, 1}, signer.ErrInvalidKey},
	} {
		if pub, err := pkcs11.RSAPublic(c.n, c.e); !errors.Is(err, c.want) {
			t.Errorf("%s: RSAPublic = %v, %v; want %v", c.name, pub, err, c.want)
		}
	}
}

// FuzzDecodeRSAPublic: whatever CKA_MODULUS and CKA_PUBLIC_EXPONENT a
// token returns, decoding them gives a key crypto/rsa can use (verifying
// against it neither panics nor accepts garbage) or an error wrapping
// ErrInvalidKey or ErrUnsupported.
func FuzzDecodeRSAPublic(f *testing.F) {
	key := rsa2048(f)
	f.Add(key.N.Bytes(), []byte{1, 0, 1})
	f.Add(append([]byte{0}, key.N.Bytes()...), []byte{0, 3})
	f.Add(new(big.Int).SetBit(key.N, 0, 0).Bytes(), []byte{1, 0, 1})
	f.Add(key.N.Bytes()[1:], []byte{1, 0, 1})
	f.Add(key.N.Bytes(), []byte{0x7f, 0xff, 0xff, 0xff})
	f.Add(key.N.Bytes(), []byte{0x80, 0, 0, 1})
	f.Add([]byte{}, []byte{})
	f.Fuzz(func(t *testing.T, n, e []byte) {
		pub, err := pkcs11.RSAPublic(n, e)
		if err != nil {
			if !errors.Is(err, signer.ErrInvalidKey) && !errors.Is(err, signer.ErrUnsupported) {
				t.Fatalf("RSAPublic(%x, %x): %v wraps neither ErrInvalidKey nor ErrUnsupported", n, e, err)
			}
			return
		}
		if b := pub.N.BitLen(); b < 2048 || b > 16384 || pub.N.Bit(0) != 1 || pub.E < 3 || pub.E%2 != 1 {
			t.Fatalf("RSAPublic(%x, %x) accepted N of %d bits, E %d", n, e, b, pub.E)
		}
		if pub.N.Cmp(new(big.Int).SetBytes(n)) != 0 || int64(pub.E) != new(big.Int).SetBytes(e).Int64() {
			t.Fatalf("RSAPublic(%x, %x) decoded to %v", n, e, pub)
		}
		d := sha256.Sum256(n)
		if rsa.VerifyPKCS1v15(pub, crypto.SHA256, d[:], make([]byte, pub.Size())) == nil {
			t.Fatalf("a zero signature verifies against %v", pub)
		}
	})
}
