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
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
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
		if _, err := pkcs11.MarshalECPoint(pub); err != nil {
			t.Fatal(err)
		}
	})
}

func FuzzParseECParams(f *testing.F) {
	for _, s := range []string{"06032b6570", "130c656477617264733235353139", "06082a8648ce3d030107", "06052b81040022"} {
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
