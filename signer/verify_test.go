package signer_test

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
	"fmt"
	"math/big"
	"testing"

	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/internal/eckey"
	"github.com/signerkit/signerkit/signer"
)

// ---------------------------------------------------------------------------
// Helpers

// splitRS splits a raw ECDSA signature for alg into r and s.
func splitRS(alg signer.Algorithm, raw []byte) (r, s *big.Int) {
	size := scalarSize(alg)
	return new(big.Int).SetBytes(raw[:size]), new(big.Int).SetBytes(raw[size:])
}

// joinRS makes a raw ECDSA signature for alg; r and s must fit.
func joinRS(alg signer.Algorithm, r, s *big.Int) []byte {
	size := scalarSize(alg)
	raw := make([]byte, 2*size)
	r.FillBytes(raw[:size])
	s.FillBytes(raw[size:])
	return raw
}

// derLen encodes a DER definite length.
func derLen(n int) []byte {
	switch {
	case n < 0x80:
		return []byte{byte(n)}
	case n < 0x100:
		return []byte{0x81, byte(n)}
	}
	return []byte{0x82, byte(n >> 8), byte(n)}
}

func derTLV(tag byte, content ...[]byte) []byte {
	c := bytes.Join(content, nil)
	return append(append([]byte{tag}, derLen(len(c))...), c...)
}

// derInt is the minimal DER INTEGER for x (encoding/asn1 for negatives).
func derInt(x *big.Int) []byte {
	if x.Sign() < 0 {
		b, err := asn1.Marshal(x)
		if err != nil {
			panic(err)
		}
		return b
	}
	b := x.Bytes()
	if len(b) == 0 || b[0]&0x80 != 0 {
		b = append([]byte{0}, b...)
	}
	return derTLV(0x02, b)
}

// derSig is the DER ECDSA-Sig-Value SEQUENCE { r INTEGER, s INTEGER }.
func derSig(r, s *big.Int) []byte { return derTLV(0x30, derInt(r), derInt(s)) }

func flipBit(b []byte, bit int) []byte {
	c := bytes.Clone(b)
	c[bit/8] ^= 1 << (bit % 8)
	return c
}

func hexBytes(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// wantErr fails t unless err wraps want.
func wantErr(t testing.TB, what string, err, want error) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: nil error, want one wrapping %v", what, want)
	} else if !errors.Is(err, want) {
		t.Errorf("%s: error %q does not wrap %v", what, err, want)
	}
}

var sigSizes = map[signer.Algorithm]int{
	signer.Ed25519:        64,
	signer.ECDSAP256:      64,
	signer.ECDSAP384:      96,
	signer.ECDSASecp256k1: 64,
	signer.RSAPKCS1v15:    256,
	signer.RSAPSS:         256,
}

// ---------------------------------------------------------------------------
// Algorithm.Verify

func TestVerifyValid(t *testing.T) {
	large := make([]byte, 64<<10)
	if _, err := rand.Read(large); err != nil {
		t.Fatal(err)
	}
	msgs := [][]byte{nil, {}, {0}, []byte("hello, signer"), bytes.Repeat([]byte{0xff}, 1000), large}
	for _, alg := range signer.Algorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			t.Parallel()
			for n := range 2 {
				k := testKey(t, alg, n)
				for _, msg := range msgs {
					sig := signStd(t, k, msg)
					if len(sig) != sigSizes[alg] {
						t.Errorf("key %d, %d-byte message: signature is %d bytes, want %d", n, len(msg), len(sig), sigSizes[alg])
					}
					if err := alg.Verify(k.Public(), msg, sig); err != nil {
						t.Errorf("key %d, %d-byte message: Verify: %v", n, len(msg), err)
					}
				}
			}
		})
	}
}

func TestVerifySecp256k1Deterministic(t *testing.T) {
	k := testKey(t, signer.ECDSASecp256k1, 0)
	msg := []byte("RFC 6979")
	a, b := signStd(t, k, msg), signStd(t, k, msg)
	if !bytes.Equal(a, b) {
		t.Errorf("secp256k1 SignContext is not deterministic: %x then %x", a, b)
	}
}

// TestVerifyRejects alters a valid signature, its message or its key in
// every way listed and checks that Verify and the standard library both
// reject the result, Verify with an error wrapping ErrInvalidSignature.
func TestVerifyRejects(t *testing.T) {
	for _, alg := range signer.Algorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			t.Parallel()
			k, other := testKey(t, alg, 0), testKey(t, alg, 1)
			msg := []byte("reject me")
			sig := signStd(t, k, msg)

			type variant struct {
				name     string
				pub      crypto.PublicKey
				msg, sig []byte
			}
			vs := []variant{
				{"wrong message", k.Public(), []byte("reject mf"), sig},
				{"message with a byte more", k.Public(), append(bytes.Clone(msg), 0), sig},
				{"message with a byte less", k.Public(), msg[:len(msg)-1], sig},
				{"empty message", k.Public(), nil, sig},
				{"wrong key", other.Public(), msg, sig},
				{"nil signature", k.Public(), msg, nil},
				{"empty signature", k.Public(), msg, []byte{}},
				{"truncated by one byte", k.Public(), msg, sig[:len(sig)-1]},
				{"first byte cut", k.Public(), msg, sig[1:]},
				{"truncated to half", k.Public(), msg, sig[:len(sig)/2]},
				{"extended by a zero byte", k.Public(), msg, append(bytes.Clone(sig), 0)},
				{"zero byte prepended", k.Public(), msg, append([]byte{0}, sig...)},
				{"doubled", k.Public(), msg, append(bytes.Clone(sig), sig...)},
				{"all zero", k.Public(), msg, make([]byte, len(sig))},
				{"all ones", k.Public(), msg, bytes.Repeat([]byte{0xff}, len(sig))},
			}
			// A bit flipped in every byte, a different bit in each, and the
			// lowest and highest bit of the signature.
			for i := range sig {
				vs = append(vs, variant{fmt.Sprintf("bit %d flipped", 8*i+i%8), k.Public(), msg, flipBit(sig, 8*i+i%8)})
			}
			vs = append(vs,
				variant{"bit 7 flipped", k.Public(), msg, flipBit(sig, 7)},
				variant{"last bit 0 flipped", k.Public(), msg, flipBit(sig, 8*(len(sig)-1))})

			for _, v := range vs {
				err := alg.Verify(v.pub, v.msg, v.sig)
				wantErr(t, v.name, err, signer.ErrInvalidSignature)
				if errors.Is(err, signer.ErrUnsupported) {
					t.Errorf("%s: error %q wraps ErrUnsupported for a key of the right kind", v.name, err)
				}
				if stdVerify(alg, v.pub, v.msg, v.sig) == nil {
					t.Errorf("%s: the standard library accepts the altered signature", v.name)
				}
			}
			// The original still verifies: nothing above changed it in place.
			if err := alg.Verify(k.Public(), msg, sig); err != nil {
				t.Fatalf("Verify of the original signature: %v", err)
			}
		})
	}
}

func TestVerifyWrongKeyType(t *testing.T) {
	keys := publicKeys(t)
	msg := []byte("wrong key type")
	for _, alg := range signer.Algorithms() {
		sig := signStd(t, testKey(t, alg, 0), msg)
		for _, k := range keys {
			accepted := false
			for _, a := range k.accept {
				accepted = accepted || a == alg
			}
			if accepted {
				continue
			}
			var err error
			if p := catchPanic(func() { err = alg.Verify(k.pub, msg, sig) }); p != nil {
				t.Errorf("%v.Verify with a %s key panics: %v", alg, k.name, p)
				continue
			}
			wantErr(t, fmt.Sprintf("%v.Verify with a %s key", alg, k.name), err, signer.ErrUnsupported)
		}
	}
	// Invalid algorithms verify nothing.
	edKey := testKey(t, signer.Ed25519, 0)
	sig := signStd(t, edKey, msg)
	for _, a := range []signer.Algorithm{0, 7, 255} {
		wantErr(t, fmt.Sprintf("%v.Verify", a), a.Verify(edKey.Public(), msg, sig), signer.ErrUnsupported)
	}
}

// TestVerifyMalformedRSAKeys checks that degenerate RSA public keys are
// refused without a panic.
func TestVerifyMalformedRSAKeys(t *testing.T) {
	msg := []byte("m")
	sig := make([]byte, 256)
	sig[255] = 1
	for _, k := range []struct {
		name string
		pub  *rsa.PublicKey
	}{
		{"zero", &rsa.PublicKey{}},
		{"N=1", &rsa.PublicKey{N: big.NewInt(1), E: 65537}},
		{"E=0", &rsa.PublicKey{N: testKey(t, signer.RSAPSS, 0).Public().(*rsa.PublicKey).N, E: 0}},
	} {
		for _, alg := range []signer.Algorithm{signer.RSAPKCS1v15, signer.RSAPSS} {
			var err error
			if p := catchPanic(func() { err = alg.Verify(k.pub, msg, sig) }); p != nil {
				t.Errorf("%v.Verify with a %s RSA key panics: %v", alg, k.name, p)
				continue
			}
			if err == nil {
				t.Errorf("%v.Verify with a %s RSA key = nil, want an error", alg, k.name)
			}
		}
	}
}

func TestVerifySecp256k1HighSRejected(t *testing.T) {
	alg := signer.ECDSASecp256k1
	k := testKey(t, alg, 0)
	pub := k.Public().(*ecdsa.PublicKey)
	for i := range 8 {
		msg := []byte(fmt.Sprintf("high S #%d", i))
		sig := signStd(t, k, msg) // low-S, checked by stdVerify
		r, s := splitRS(alg, sig)
		highS := new(big.Int).Sub(k1N, s)
		high := joinRS(alg, r, highS)

		// (r, n−s) is mathematically valid: crypto/ecdsa accepts it.
		if !ecdsa.Verify(pub, stdDigest(alg, msg), r, highS) {
			t.Fatal("crypto/ecdsa rejects the high-S variant; the test is wrong")
		}
		err := alg.Verify(pub, msg, high)
		wantErr(t, "Verify of a high-S secp256k1 signature", err, signer.ErrInvalidSignature)

		// The conversions lower it back.
		der, err := signer.ECDSAToASN1(alg, high)
		if err != nil {
			t.Fatalf("ECDSAToASN1(high S): %v", err)
		}
		if !bytes.Equal(der, derSig(r, s)) {
			t.Errorf("ECDSAToASN1(high S) = %x, want the low-S %x", der, derSig(r, s))
		}
		if !ecdsa.VerifyASN1(pub, stdDigest(alg, msg), der) {
			t.Error("crypto/ecdsa rejects ECDSAToASN1(high S)")
		}
		raw, err := signer.ECDSAToRaw(alg, derSig(r, highS))
		if err != nil || !bytes.Equal(raw, sig) {
			t.Errorf("ECDSAToRaw(high-S DER) = %x, %v; want the low-S %x", raw, err, sig)
		}
	}
}

// TestVerifyNISTHighSAccepted checks what the Algorithm docs say: only
// ECDSASecp256k1 requires a low S; P-256 and P-384 signatures with s > n/2
// verify, as with crypto/ecdsa.
func TestVerifyNISTHighSAccepted(t *testing.T) {
	for _, alg := range []signer.Algorithm{signer.ECDSAP256, signer.ECDSAP384} {
		k := testKey(t, alg, 0)
		n := curveN(alg)
		half := new(big.Int).Rsh(n, 1)
		sawHigh, sawLow := false, false
		for i := 0; i < 64 && !(sawHigh && sawLow); i++ {
			msg := []byte(fmt.Sprintf("NIST high S #%d", i))
			sig := signStd(t, k, msg)
			r, s := splitRS(alg, sig)
			flipped := joinRS(alg, r, new(big.Int).Sub(n, s))
			mustStdVerify(t, alg, k.Public(), msg, flipped)
			for _, v := range [][]byte{sig, flipped} {
				if splitSecond(alg, v).Cmp(half) > 0 {
					sawHigh = true
				} else {
					sawLow = true
				}
				if err := alg.Verify(k.Public(), msg, v); err != nil {
					t.Errorf("%v.Verify(s=%x): %v", alg, splitSecond(alg, v), err)
				}
			}
		}
		if !sawHigh || !sawLow {
			t.Errorf("%v: did not see both a high and a low S", alg)
		}
	}
}

// TestVerifyECDSARange checks that r or s of zero, n or more is rejected,
// on every ECDSA curve.
func TestVerifyECDSARange(t *testing.T) {
	for _, alg := range ecdsaAlgs {
		k := testKey(t, alg, 0)
		msg := []byte("range")
		sig := signStd(t, k, msg)
		r, s := splitRS(alg, sig)
		n := curveN(alg)
		size := scalarSize(alg)
		max := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(8*size)), big.NewInt(1))
		nPlus1 := new(big.Int).Add(n, big.NewInt(1))
		cases := []struct {
			name string
			r, s *big.Int
		}{
			{"r = 0", new(big.Int), s},
			{"s = 0", r, new(big.Int)},
			{"r = s = 0", new(big.Int), new(big.Int)},
			{"r = n", n, s},
			{"s = n", r, n},
			{"r = n+1", nPlus1, s},
			{"s = n+1", r, nPlus1},
			{"r = 2^k−1", max, s},
			{"s = 2^k−1", r, max},
		}
		// r + n and s + n name the same residues; they fit only when small.
		if rn := new(big.Int).Add(r, n); rn.Cmp(max) <= 0 {
			cases = append(cases, struct {
				name string
				r, s *big.Int
			}{"r + n", rn, s})
		}
		for _, c := range cases {
			raw := joinRS(alg, c.r, c.s)
			wantErr(t, fmt.Sprintf("%v.Verify(%s)", alg, c.name), alg.Verify(k.Public(), msg, raw), signer.ErrInvalidSignature)
			if stdVerify(alg, k.Public(), msg, raw) == nil {
				t.Errorf("%v %s: the standard library accepts it", alg, c.name)
			}
		}
	}
}

func TestVerifyEd25519NonCanonicalS(t *testing.T) {
	// ℓ, the order of the Ed25519 base point.
	l, _ := new(big.Int).SetString("7237005577332262213973186563042994240857116359379907606001950938285454250989", 10)
	k := testKey(t, signer.Ed25519, 0)
	msg := []byte("S + l")
	sig := signStd(t, k, msg)
	le := func(b []byte) []byte { c := bytes.Clone(b); slicesReverse(c); return c }
	s := new(big.Int).SetBytes(le(sig[32:]))
	s.Add(s, l)
	if s.BitLen() > 256 {
		t.Skip("S + ℓ does not fit")
	}
	bad := append(bytes.Clone(sig[:32]), le(s.FillBytes(make([]byte, 32)))...)
	if stdVerify(signer.Ed25519, k.Public(), msg, bad) == nil {
		t.Fatal("crypto/ed25519 accepts S + ℓ")
	}
	wantErr(t, "Verify(S + ℓ)", signer.Ed25519.Verify(k.Public(), msg, bad), signer.ErrInvalidSignature)
}

func slicesReverse(b []byte) {
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
}

func TestVerifyRSASchemes(t *testing.T) {
	priv := rsaKeys(t)[0]
	pub := &priv.PublicKey
	msg := []byte("scheme")
	digest := stdDigest(signer.RSAPSS, msg)

	pkcs, err := rsa.SignPKCS1v15(rand.Reader, priv, crypto.SHA256, digest)
	if err != nil {
		t.Fatal(err)
	}
	mustStdVerify(t, signer.RSAPKCS1v15, pub, msg, pkcs)
	if err := signer.RSAPKCS1v15.Verify(pub, msg, pkcs); err != nil {
		t.Errorf("RSAPKCS1v15.Verify: %v", err)
	}
	wantErr(t, "RSAPSS.Verify of a PKCS #1 v1.5 signature", signer.RSAPSS.Verify(pub, msg, pkcs), signer.ErrInvalidSignature)

	pss := signStd(t, testKey(t, signer.RSAPSS, 0), msg)
	wantErr(t, "RSAPKCS1v15.Verify of a PSS signature", signer.RSAPKCS1v15.Verify(pub, msg, pss), signer.ErrInvalidSignature)

	// RSAPSS means a salt as long as the hash; other salts are refused.
	for _, salt := range []int{0, 20, 64, rsa.PSSSaltLengthAuto} {
		sig, err := rsa.SignPSS(rand.Reader, priv, crypto.SHA256, digest, &rsa.PSSOptions{SaltLength: salt})
		if err != nil {
			t.Fatal(err)
		}
		if err := rsa.VerifyPSS(pub, crypto.SHA256, digest, sig, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthAuto}); err != nil {
			t.Fatalf("crypto/rsa rejects its own PSS signature with salt %d: %v", salt, err)
		}
		wantErr(t, fmt.Sprintf("RSAPSS.Verify with salt length %d", salt), signer.RSAPSS.Verify(pub, msg, sig), signer.ErrInvalidSignature)
	}
	// A 32-byte salt made by crypto/rsa directly verifies.
	sig, err := rsa.SignPSS(rand.Reader, priv, crypto.SHA256, digest, &rsa.PSSOptions{SaltLength: sha256.Size})
	if err != nil {
		t.Fatal(err)
	}
	mustStdVerify(t, signer.RSAPSS, pub, msg, sig)
	if err := signer.RSAPSS.Verify(pub, msg, sig); err != nil {
		t.Errorf("RSAPSS.Verify with a 32-byte salt: %v", err)
	}
}

func TestVerifyECDSACrossCurve(t *testing.T) {
	msg := []byte("cross curve")
	p256 := testKey(t, signer.ECDSAP256, 0)
	k1 := testKey(t, signer.ECDSASecp256k1, 0)
	p256Sig := signStd(t, p256, msg)
	k1Sig := signStd(t, k1, msg)
	wantErr(t, "secp256k1 Verify of a P-256 signature", signer.ECDSASecp256k1.Verify(k1.Public(), msg, p256Sig), signer.ErrInvalidSignature)
	wantErr(t, "P-256 Verify of a secp256k1 signature", signer.ECDSAP256.Verify(p256.Public(), msg, k1Sig), signer.ErrInvalidSignature)
	wantErr(t, "P-384 Verify of a P-256 signature", signer.ECDSAP384.Verify(testKey(t, signer.ECDSAP384, 0).Public(), msg, p256Sig), signer.ErrInvalidSignature)
	// A P-256 key is not a P-384 or secp256k1 key, nor the reverse.
	wantErr(t, "P-384 Verify with a P-256 key", signer.ECDSAP384.Verify(p256.Public(), msg, p256Sig), signer.ErrUnsupported)
	wantErr(t, "secp256k1 Verify with a P-256 key", signer.ECDSASecp256k1.Verify(p256.Public(), msg, p256Sig), signer.ErrUnsupported)
	wantErr(t, "P-256 Verify with a secp256k1 key", signer.ECDSAP256.Verify(k1.Public(), msg, k1Sig), signer.ErrUnsupported)
}

// ---------------------------------------------------------------------------
// ECDSAToRaw and ECDSAToASN1

func TestECDSAToRawRoundTripNIST(t *testing.T) {
	for _, alg := range []signer.Algorithm{signer.ECDSAP256, signer.ECDSAP384} {
		priv, err := ecdsa.GenerateKey(alg.Curve(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		n := curveN(alg)
		for i := range 16 {
			msg := []byte(fmt.Sprintf("round trip #%d", i))
			digest := stdDigest(alg, msg)
			der, err := ecdsa.SignASN1(rand.Reader, priv, digest)
			if err != nil {
				t.Fatal(err)
			}
			if !ecdsa.VerifyASN1(&priv.PublicKey, digest, der) {
				t.Fatal("crypto/ecdsa rejects its own signature")
			}
			raw, err := signer.ECDSAToRaw(alg, der)
			if err != nil {
				t.Fatalf("%v ECDSAToRaw(%x): %v", alg, der, err)
			}
			if len(raw) != 2*scalarSize(alg) {
				t.Fatalf("%v ECDSAToRaw gives %d bytes, want %d", alg, len(raw), 2*scalarSize(alg))
			}
			mustStdVerify(t, alg, &priv.PublicKey, msg, raw)
			if err := alg.Verify(&priv.PublicKey, msg, raw); err != nil {
				t.Errorf("%v Verify(ECDSAToRaw(SignASN1)): %v", alg, err)
			}
			back, err := signer.ECDSAToASN1(alg, raw)
			if err != nil || !bytes.Equal(back, der) {
				t.Errorf("%v ECDSAToASN1(ECDSAToRaw(der)) = %x, %v; want %x", alg, back, err, der)
			}

			// The NIST curves keep a high S as it is.
			r, s := splitRS(alg, raw)
			otherS := new(big.Int).Sub(n, s)
			otherDER := derSig(r, otherS)
			if !ecdsa.VerifyASN1(&priv.PublicKey, digest, otherDER) {
				t.Fatal("crypto/ecdsa rejects (r, n−s)")
			}
			raw2, err := signer.ECDSAToRaw(alg, otherDER)
			if err != nil || !bytes.Equal(raw2, joinRS(alg, r, otherS)) {
				t.Errorf("%v ECDSAToRaw((r, n−s)) = %x, %v; want S kept as n−s", alg, raw2, err)
			}
			mustStdVerify(t, alg, &priv.PublicKey, msg, raw2)
			back2, err := signer.ECDSAToASN1(alg, raw2)
			if err != nil || !bytes.Equal(back2, otherDER) {
				t.Errorf("%v ECDSAToASN1 of (r, n−s) = %x, %v; want %x", alg, back2, err, otherDER)
			}
		}
	}
}

func TestECDSAToRawRoundTripSecp256k1(t *testing.T) {
	alg := signer.ECDSASecp256k1
	k := testKey(t, alg, 0)
	pub := k.Public().(*ecdsa.PublicKey)
	for i := range 16 {
		msg := []byte(fmt.Sprintf("secp256k1 round trip #%d", i))
		digest := stdDigest(alg, msg)
		der, err := k.Sign(rand.Reader, digest, crypto.SHA256)
		if err != nil {
			t.Fatal(err)
		}
		if !ecdsa.VerifyASN1(pub, digest, der) {
			t.Fatalf("crypto/ecdsa rejects the secp256k1 Sign signature %x", der)
		}
		raw, err := signer.ECDSAToRaw(alg, der)
		if err != nil {
			t.Fatalf("ECDSAToRaw(%x): %v", der, err)
		}
		mustStdVerify(t, alg, pub, msg, raw)
		if err := alg.Verify(pub, msg, raw); err != nil {
			t.Errorf("Verify(ECDSAToRaw(Sign)): %v", err)
		}
		// Both are RFC 6979 over the same digest.
		if ctxSig := signStd(t, k, msg); !bytes.Equal(raw, ctxSig) {
			t.Errorf("ECDSAToRaw(Sign) = %x, SignContext = %x", raw, ctxSig)
		}
		back, err := signer.ECDSAToASN1(alg, raw)
		if err != nil || !bytes.Equal(back, der) {
			t.Errorf("ECDSAToASN1(ECDSAToRaw(der)) = %x, %v; want %x", back, err, der)
		}
	}
}

func TestECDSALowSBoundary(t *testing.T) {
	one := big.NewInt(1)
	for _, alg := range ecdsaAlgs {
		n := curveN(alg)
		half := new(big.Int).Rsh(n, 1)
		halfPlus1 := new(big.Int).Add(half, one)
		nMinus1 := new(big.Int).Sub(n, one)
		lowers := alg == signer.ECDSASecp256k1
		for _, c := range []struct {
			name      string
			s, wantS  *big.Int
			wantLower bool
		}{
			{"s = 1", one, one, false},
			{"s = ⌊n/2⌋", half, half, false},
			{"s = ⌊n/2⌋+1", halfPlus1, half, true}, // n − (⌊n/2⌋+1) = ⌊n/2⌋
			{"s = n−1", nMinus1, one, true},
		} {
			want := c.s
			if lowers && c.wantLower {
				want = c.wantS
			}
			raw, err := signer.ECDSAToRaw(alg, derSig(one, c.s))
			if err != nil || !bytes.Equal(raw, joinRS(alg, one, want)) {
				t.Errorf("%v ECDSAToRaw(r=1, %s) = %x, %v; want s = %x", alg, c.name, raw, err, want)
			}
			der, err := signer.ECDSAToASN1(alg, joinRS(alg, one, c.s))
			if err != nil || !bytes.Equal(der, derSig(one, want)) {
				t.Errorf("%v ECDSAToASN1(r=1, %s) = %x, %v; want %x", alg, c.name, der, err, derSig(one, want))
			}
		}
	}
}

func TestECDSAConversionVectors(t *testing.T) {
	for _, alg := range ecdsaAlgs {
		size := scalarSize(alg)
		// r = s = 1: the shortest DER, padded to full width in raw.
		oneDER := hexBytes("3006020101020101")
		raw := make([]byte, 2*size)
		raw[size-1], raw[2*size-1] = 1, 1
		if got, err := signer.ECDSAToRaw(alg, oneDER); err != nil || !bytes.Equal(got, raw) {
			t.Errorf("%v ECDSAToRaw(%x) = %x, %v; want %x", alg, oneDER, got, err, raw)
		}
		if got, err := signer.ECDSAToASN1(alg, raw); err != nil || !bytes.Equal(got, oneDER) {
			t.Errorf("%v ECDSAToASN1(%x) = %x, %v; want %x", alg, raw, got, err, oneDER)
		}
		// r = n−1 has its top bit set: DER needs a 0x00 before it.
		nMinus1 := new(big.Int).Sub(curveN(alg), big.NewInt(1))
		der := derSig(nMinus1, big.NewInt(1))
		if der[4] != 0 {
			t.Fatalf("test vector: r = n−1 should need a leading zero: %x", der)
		}
		raw = joinRS(alg, nMinus1, big.NewInt(1))
		if got, err := signer.ECDSAToRaw(alg, der); err != nil || !bytes.Equal(got, raw) {
			t.Errorf("%v ECDSAToRaw(%x) = %x, %v; want %x", alg, der, got, err, raw)
		}
		if got, err := signer.ECDSAToASN1(alg, raw); err != nil || !bytes.Equal(got, der) {
			t.Errorf("%v ECDSAToASN1(%x) = %x, %v; want %x", alg, raw, got, err, der)
		}
		// Leading zero bytes in raw form are not copied into DER.
		r := big.NewInt(0x7f)
		s := new(big.Int).Lsh(big.NewInt(1), uint(8*size-9)) // 0x0080…
		raw = joinRS(alg, r, s)
		if got, err := signer.ECDSAToASN1(alg, raw); err != nil || !bytes.Equal(got, derSig(r, s)) {
			t.Errorf("%v ECDSAToASN1(short r and s) = %x, %v; want %x", alg, got, err, derSig(r, s))
		}
	}
}

func TestECDSAToRawMalformed(t *testing.T) {
	for _, alg := range ecdsaAlgs {
		k := testKey(t, alg, 0)
		msg := []byte("malformed")
		sig := signStd(t, k, msg)
		r, s := splitRS(alg, sig)
		der := derSig(r, s)
		if got, err := signer.ECDSAToRaw(alg, der); err != nil || !bytes.Equal(got, sig) {
			t.Fatalf("%v: ECDSAToRaw of the well-formed DER = %x, %v", alg, got, err)
		}
		if !ecdsa.VerifyASN1(k.Public().(*ecdsa.PublicKey), stdDigest(alg, msg), der) {
			t.Fatalf("%v: crypto/ecdsa rejects the well-formed DER", alg)
		}
		n := curveN(alg)
		zero, one := new(big.Int), big.NewInt(1)
		over := new(big.Int).Lsh(one, uint(8*scalarSize(alg))) // 2^(8·size)
		content := der[2:]
		if der[1] == 0x81 {
			content = der[3:]
		}
		rInt, sInt := derInt(r), derInt(s)
		cases := []struct {
			name string
			der  []byte
		}{
			{"nil", nil},
			{"empty", []byte{}},
			{"empty SEQUENCE", []byte{0x30, 0x00}},
			{"text", []byte("not a signature")},
			{"truncated by one byte", der[:len(der)-1]},
			{"header only", der[:2]},
			{"trailing zero byte", append(bytes.Clone(der), 0)},
			{"trailing signature", append(bytes.Clone(der), der...)},
			{"SET instead of SEQUENCE", append([]byte{0x31}, der[1:]...)},
			{"OCTET STRING instead of SEQUENCE", append([]byte{0x04}, der[1:]...)},
			{"r only", derTLV(0x30, rInt)},
			{"s as OCTET STRING", derTLV(0x30, rInt, derTLV(0x04, s.Bytes()))},
			{"r as BOOLEAN", derTLV(0x30, []byte{0x01, 0x01, 0xff}, sInt)},
			{"r = 0", derSig(zero, s)},
			{"s = 0", derSig(r, zero)},
			{"r = −r", derSig(new(big.Int).Neg(r), s)},
			{"s = −s", derSig(r, new(big.Int).Neg(s))},
			{"r = −1", derSig(big.NewInt(-1), s)},
			{"r = n", derSig(n, s)},
			{"s = n", derSig(r, n)},
			{"r = n + r", derSig(new(big.Int).Add(n, r), s)},
			{"s = 2^(8·size)", derSig(r, over)},
			{"empty INTEGER", derTLV(0x30, []byte{0x02, 0x00}, sInt)},
			{"non-minimal INTEGER", derTLV(0x30, []byte{0x02, 0x02, 0x00, 0x01}, sInt)},
			{"non-minimal negative INTEGER", derTLV(0x30, []byte{0x02, 0x02, 0xff, 0x80}, sInt)},
			{"non-minimal SEQUENCE length", append([]byte{0x30, 0x81, byte(len(content))}, content...)},
			{"indefinite length", append(append([]byte{0x30, 0x80}, content...), 0, 0)},
			{"length past the end", append([]byte{0x30, byte(len(content) + 1)}, content...)},
			{"length short of the end", append([]byte{0x30, byte(len(content) - 1)}, content...)},
		}
		for _, c := range cases {
			var raw []byte
			var err error
			if p := catchPanic(func() { raw, err = signer.ECDSAToRaw(alg, c.der) }); p != nil {
				t.Errorf("%v ECDSAToRaw(%s) panics: %v", alg, c.name, p)
				continue
			}
			if err == nil {
				t.Errorf("%v ECDSAToRaw(%s = %x) = %x, nil; want an error", alg, c.name, c.der, raw)
				continue
			}
			wantErr(t, fmt.Sprintf("%v ECDSAToRaw(%s)", alg, c.name), err, signer.ErrInvalidSignature)
			if raw != nil {
				t.Errorf("%v ECDSAToRaw(%s) returns %x with its error", alg, c.name, raw)
			}
		}
	}
}

// TestECDSAToRawExtraElement: DER ECDSA-Sig-Value has exactly two INTEGERs,
// and crypto/ecdsa.VerifyASN1 rejects a SEQUENCE with more. ECDSAToRaw
// should too, or one device signature has many encodings that all convert.
func TestECDSAToRawExtraElement(t *testing.T) {
	for _, alg := range ecdsaAlgs {
		k := testKey(t, alg, 0)
		msg := []byte("extra element")
		sig := signStd(t, k, msg)
		r, s := splitRS(alg, sig)
		for name, der := range map[string][]byte{
			"NULL after s":    derTLV(0x30, derInt(r), derInt(s), []byte{0x05, 0x00}),
			"INTEGER after s": derTLV(0x30, derInt(r), derInt(s), derInt(big.NewInt(1))),
		} {
			if ecdsa.VerifyASN1(k.Public().(*ecdsa.PublicKey), stdDigest(alg, msg), der) {
				t.Fatalf("%v %s: crypto/ecdsa accepts it; the test is wrong", alg, name)
			}
			raw, err := signer.ECDSAToRaw(alg, der)
			if err == nil {
				t.Errorf("%v ECDSAToRaw(SEQUENCE with %s) = %x, nil; want ErrInvalidSignature", alg, name, raw)
			} else {
				wantErr(t, name, err, signer.ErrInvalidSignature)
			}
		}
	}
}

func TestECDSAToASN1Malformed(t *testing.T) {
	for _, alg := range ecdsaAlgs {
		size := scalarSize(alg)
		n := curveN(alg)
		one, zero := big.NewInt(1), new(big.Int)
		ones := bytes.Repeat([]byte{0xff}, 2*size)
		cases := []struct {
			name string
			raw  []byte
		}{
			{"nil", nil},
			{"empty", []byte{}},
			{"one byte short", joinRS(alg, one, one)[1:]},
			{"one byte long", append(joinRS(alg, one, one), 0)},
			{"one byte long in front", append([]byte{0}, joinRS(alg, one, one)...)},
			{"half", joinRS(alg, one, one)[:size]},
			{"all zero", make([]byte, 2*size)},
			{"all ones", ones},
			{"r = 0", joinRS(alg, zero, one)},
			{"s = 0", joinRS(alg, one, zero)},
			{"r = n", joinRS(alg, n, one)},
			{"s = n", joinRS(alg, one, n)},
			{"r = 2^k−1", append(bytes.Repeat([]byte{0xff}, size), joinRS(alg, one, one)[size:]...)},
		}
		// The other sizes in use.
		for _, other := range ecdsaAlgs {
			if scalarSize(other) != size {
				cases = append(cases, struct {
					name string
					raw  []byte
				}{"a " + other.String() + "-sized signature", joinRS(other, one, one)})
			}
		}
		for _, c := range cases {
			var der []byte
			var err error
			if p := catchPanic(func() { der, err = signer.ECDSAToASN1(alg, c.raw) }); p != nil {
				t.Errorf("%v ECDSAToASN1(%s) panics: %v", alg, c.name, p)
				continue
			}
			if err == nil {
				t.Errorf("%v ECDSAToASN1(%s) = %x, nil; want an error", alg, c.name, der)
				continue
			}
			wantErr(t, fmt.Sprintf("%v ECDSAToASN1(%s)", alg, c.name), err, signer.ErrInvalidSignature)
		}
	}
}

func TestECDSAConversionNotECDSA(t *testing.T) {
	der := hexBytes("3006020101020101")
	raw := make([]byte, 64)
	raw[31], raw[63] = 1, 1
	for _, a := range []signer.Algorithm{0, signer.Ed25519, signer.RSAPKCS1v15, signer.RSAPSS, 7, 255} {
		out, err := signer.ECDSAToRaw(a, der)
		wantErr(t, fmt.Sprintf("ECDSAToRaw(%v)", a), err, signer.ErrUnsupported)
		if out != nil {
			t.Errorf("ECDSAToRaw(%v) = %x with an error", a, out)
		}
		out, err = signer.ECDSAToASN1(a, raw)
		wantErr(t, fmt.Sprintf("ECDSAToASN1(%v)", a), err, signer.ErrUnsupported)
		if out != nil {
			t.Errorf("ECDSAToASN1(%v) = %x with an error", a, out)
		}
	}
}

// ---------------------------------------------------------------------------
// CheckSignerOpts

// errAny in a CheckSignerOpts case means an error, whatever it wraps.
var errAny = errors.New("any error")

func TestCheckSignerOpts(t *testing.T) {
	d := func(n int) []byte { return bytes.Repeat([]byte{0x5a}, n) }
	msg := []byte("the whole message, any length")
	cases := []struct {
		alg    signer.Algorithm
		digest []byte
		opts   crypto.SignerOpts
		want   error // nil, a sentinel, or errAny
	}{
		// Ed25519: pure only.
		{signer.Ed25519, msg, crypto.Hash(0), nil},
		{signer.Ed25519, nil, crypto.Hash(0), nil},
		{signer.Ed25519, d(5000), crypto.Hash(0), nil},
		{signer.Ed25519, msg, &ed25519.Options{}, nil},
		{signer.Ed25519, msg, &ed25519.Options{Hash: crypto.SHA512}, signer.ErrUnsupported},
		{signer.Ed25519, d(64), &ed25519.Options{Hash: crypto.SHA512}, signer.ErrUnsupported},
		{signer.Ed25519, d(64), crypto.SHA512, signer.ErrUnsupported},
		{signer.Ed25519, msg, &ed25519.Options{Context: "ctx"}, signer.ErrUnsupported},
		{signer.Ed25519, d(64), &ed25519.Options{Hash: crypto.SHA512, Context: "ctx"}, signer.ErrUnsupported},
		{signer.Ed25519, d(32), crypto.SHA256, errAny},
		{signer.Ed25519, msg, nil, errAny},
		{signer.Ed25519, msg, crypto.MD4, errAny},
		{signer.Ed25519, msg, crypto.Hash(99), errAny},

		// ECDSA: a named hash and a digest of its length.
		{signer.ECDSAP256, d(32), crypto.SHA256, nil},
		{signer.ECDSAP256, d(48), crypto.SHA384, nil},
		{signer.ECDSAP256, d(64), crypto.SHA512, nil},
		{signer.ECDSAP256, d(31), crypto.SHA256, signer.ErrInvalidMessage},
		{signer.ECDSAP256, d(33), crypto.SHA256, signer.ErrInvalidMessage},
		{signer.ECDSAP256, nil, crypto.SHA256, signer.ErrInvalidMessage},
		{signer.ECDSAP256, msg, crypto.SHA256, signer.ErrInvalidMessage},
		{signer.ECDSAP256, d(32), crypto.Hash(0), signer.ErrInvalidMessage},
		{signer.ECDSAP256, d(32), nil, errAny},
		{signer.ECDSAP256, d(16), crypto.MD4, errAny},
		{signer.ECDSAP256, d(32), crypto.Hash(99), errAny},
		{signer.ECDSAP384, d(48), crypto.SHA384, nil},
		{signer.ECDSAP384, d(32), crypto.SHA384, signer.ErrInvalidMessage},
		{signer.ECDSAP384, d(48), crypto.Hash(0), signer.ErrInvalidMessage},
		{signer.ECDSAP384, d(48), nil, errAny},
		{signer.ECDSASecp256k1, d(32), crypto.SHA256, nil},
		{signer.ECDSASecp256k1, d(64), crypto.SHA256, signer.ErrInvalidMessage},
		{signer.ECDSASecp256k1, d(32), crypto.Hash(0), signer.ErrInvalidMessage},
		{signer.ECDSASecp256k1, d(32), nil, errAny},
		{signer.ECDSASecp256k1, d(16), crypto.MD4, errAny},
		{signer.ECDSASecp256k1, d(32), crypto.Hash(255), errAny},

		// RSA: the same, PSS options included.
		{signer.RSAPKCS1v15, d(32), crypto.SHA256, nil},
		{signer.RSAPKCS1v15, d(64), crypto.SHA512, nil},
		{signer.RSAPKCS1v15, d(32), crypto.SHA512, signer.ErrInvalidMessage},
		{signer.RSAPKCS1v15, d(32), crypto.Hash(0), signer.ErrInvalidMessage},
		{signer.RSAPKCS1v15, d(32), nil, errAny},
		{signer.RSAPKCS1v15, d(16), crypto.MD4, errAny},
		{signer.RSAPKCS1v15, d(32), crypto.Hash(99), errAny},
		{signer.RSAPSS, d(32), signer.RSAPSS.SignerOpts(), nil},
		{signer.RSAPSS, d(32), &rsa.PSSOptions{Hash: crypto.SHA256}, nil},
		{signer.RSAPSS, d(48), &rsa.PSSOptions{Hash: crypto.SHA384}, nil},
		{signer.RSAPSS, d(20), &rsa.PSSOptions{Hash: crypto.SHA256}, signer.ErrInvalidMessage},
		{signer.RSAPSS, d(32), &rsa.PSSOptions{}, signer.ErrInvalidMessage},
		{signer.RSAPSS, d(32), crypto.SHA256, nil},
		{signer.RSAPSS, d(32), nil, errAny},
		{signer.RSAPSS, d(32), &rsa.PSSOptions{Hash: crypto.Hash(99)}, errAny},

		// Not an algorithm.
		{0, d(32), crypto.SHA256, signer.ErrUnsupported},
		{7, d(32), crypto.SHA256, signer.ErrUnsupported},
		{0, d(32), nil, errAny},
	}
	for _, c := range cases {
		name := fmt.Sprintf("CheckSignerOpts(%v, %d bytes, %#v)", c.alg, len(c.digest), c.opts)
		var err error
		if p := catchPanic(func() { err = signer.CheckSignerOpts(c.alg, c.digest, c.opts) }); p != nil {
			t.Errorf("%s panics: %v", name, p)
			continue
		}
		switch c.want {
		case nil:
			if err != nil {
				t.Errorf("%s = %v, want nil", name, err)
			}
		case errAny:
			if err == nil {
				t.Errorf("%s = nil, want an error", name)
			}
		default:
			wantErr(t, name, err, c.want)
		}
	}
}

// TestCheckSignerOptsNoPanic tries every hash value with digests of many
// lengths: CheckSignerOpts never panics, and accepts only a named hash with
// a digest of its size (or, for Ed25519 and BLS, no hash: the message).
func TestCheckSignerOptsNoPanic(t *testing.T) {
	lengths := []int{0, 1, 16, 20, 28, 32, 48, 64, 65}
	for a := 0; a <= 8; a++ {
		alg := signer.Algorithm(a)
		for h := 0; h < 64; h++ {
			hash := crypto.Hash(h)
			for _, n := range lengths {
				digest := make([]byte, n)
				var err error
				if p := catchPanic(func() { err = signer.CheckSignerOpts(alg, digest, hash) }); p != nil {
					t.Fatalf("CheckSignerOpts(%v, %d bytes, Hash(%d)) panics: %v", alg, n, h, p)
				}
				if err != nil {
					continue
				}
				switch {
				case !alg.Valid():
					t.Errorf("CheckSignerOpts(%v, …) = nil for an invalid algorithm", alg)
				case (alg == signer.Ed25519 || alg.IsBLS()) && h != 0:
					t.Errorf("CheckSignerOpts(%v, %d bytes, Hash(%d)) = nil", alg, n, h)
				case alg != signer.Ed25519 && !alg.IsBLS() && (h == 0 || !knownSize(hash) || hash.Size() != n):
					t.Errorf("CheckSignerOpts(%v, %d bytes, Hash(%d)) = nil", alg, n, h)
				}
			}
		}
		if alg.IsECDSA() || alg.IsRSA() {
			for _, h := range []crypto.Hash{crypto.SHA256, crypto.SHA384, crypto.SHA512} {
				if err := signer.CheckSignerOpts(alg, make([]byte, h.Size()), h); err != nil {
					t.Errorf("CheckSignerOpts(%v, %v digest, %v) = %v, want nil", alg, h, h, err)
				}
			}
		}
	}
}

// knownSize reports whether crypto.Hash.Size does not panic for h.
func knownSize(h crypto.Hash) bool {
	return catchPanic(func() { _ = h.Size() }) == nil
}

func TestCheckSignerOptsTypedNil(t *testing.T) {
	for _, c := range []struct {
		alg  signer.Algorithm
		opts crypto.SignerOpts
	}{
		{signer.Ed25519, (*ed25519.Options)(nil)},
		{signer.RSAPSS, (*rsa.PSSOptions)(nil)},
	} {
		var err error
		if p := catchPanic(func() { err = signer.CheckSignerOpts(c.alg, make([]byte, 32), c.opts) }); p != nil {
			t.Errorf("CheckSignerOpts(%v, 32 bytes, %T(nil)) panics: %v", c.alg, c.opts, p)
			continue
		}
		if err == nil {
			t.Errorf("CheckSignerOpts(%v, 32 bytes, %T(nil)) = nil, want an error", c.alg, c.opts)
		}
	}
}

// ---------------------------------------------------------------------------
// secp256k1 public keys

func uncompressed(pub *ecdsa.PublicKey) []byte {
	b := make([]byte, 65)
	b[0] = 4
	x, y := eckey.Coordinates(pub)
	x.FillBytes(b[1:33])
	y.FillBytes(b[33:])
	return b
}

func TestSecp256k1PublicKeyRoundTrip(t *testing.T) {
	g := eckey.NewPublic(signer.Secp256k1(), k1Gx, k1Gy)
	pubs := []*ecdsa.PublicKey{g}
	var ks []*inprocess.Signer
	for n := range 2 {
		ks = append(ks, testKey(t, signer.ECDSASecp256k1, n))
	}
	for range 6 {
		k, err := inprocess.Generate(signer.ECDSASecp256k1)
		if err != nil {
			t.Fatal(err)
		}
		defer k.Close()
		ks = append(ks, k)
	}
	for _, k := range ks {
		pubs = append(pubs, k.Public().(*ecdsa.PublicKey))
	}
	sawEven, sawOdd := false, false
	for i, pub := range pubs {
		b, err := signer.MarshalSecp256k1PublicKey(pub)
		if err != nil {
			t.Fatalf("key %d: Marshal: %v", i, err)
		}
		x, y := eckey.Coordinates(pub)
		if len(b) != 33 || b[0] != 2+byte(y.Bit(0)) || !bytes.Equal(b[1:], x.FillBytes(make([]byte, 32))) {
			t.Errorf("key %d: Marshal = %x, want 0x%02x ‖ X", i, b, 2+y.Bit(0))
		}
		if y.Bit(0) == 0 {
			sawEven = true
		} else {
			sawOdd = true
		}
		for form, enc := range map[string][]byte{"compressed": b, "uncompressed": uncompressed(pub)} {
			got, err := signer.ParseSecp256k1PublicKey(enc)
			if err != nil {
				t.Errorf("key %d: Parse(%s %x): %v", i, form, enc, err)
				continue
			}
			if !got.Equal(pub) || got.Curve != signer.Secp256k1() {
				gx, gy := eckey.Coordinates(got)
				t.Errorf("key %d: Parse(%s) = (%x, %x), want (%x, %x) on Secp256k1()", i, form, gx, gy, x, y)
			}
		}
		if i == 0 {
			const wantG = "0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"
			if hex.EncodeToString(b) != wantG {
				t.Errorf("Marshal(G) = %x, want %s", b, wantG)
			}
		}
	}
	if !sawEven || !sawOdd {
		t.Logf("only saw Y parities even=%v odd=%v", sawEven, sawOdd)
	}
	// A parsed key verifies its signer's signatures.
	k := ks[0]
	msg := []byte("parsed key")
	sig := signStd(t, k, msg)
	b, _ := signer.MarshalSecp256k1PublicKey(k.Public().(*ecdsa.PublicKey))
	parsed, err := signer.ParseSecp256k1PublicKey(b)
	if err != nil {
		t.Fatal(err)
	}
	mustStdVerify(t, signer.ECDSASecp256k1, parsed, msg, sig)
	if err := signer.ECDSASecp256k1.Verify(parsed, msg, sig); err != nil {
		t.Errorf("Verify under the parsed key: %v", err)
	}
	if a, err := signer.AlgorithmOf(pubSigner{parsed}); a != signer.ECDSASecp256k1 || err != nil {
		t.Errorf("AlgorithmOf(parsed key) = %v, %v", a, err)
	}
}

// offCurveX returns an x in [0, p) for which x³ + 7 is not a square mod p,
// so no point has it.
func offCurveX() *big.Int {
	for x := int64(1); ; x++ {
		bx := big.NewInt(x)
		v := new(big.Int).Exp(bx, big.NewInt(3), k1P)
		v.Add(v, big.NewInt(7)).Mod(v, k1P)
		if big.Jacobi(v, k1P) == -1 {
			return bx
		}
	}
}

func TestParseSecp256k1PublicKeyGarbage(t *testing.T) {
	gx := k1Gx.FillBytes(make([]byte, 32))
	gy := k1Gy.FillBytes(make([]byte, 32))
	gyPlus1 := new(big.Int).Add(k1Gy, big.NewInt(1)).FillBytes(make([]byte, 32))
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	pBytes := k1P.FillBytes(make([]byte, 32))
	cases := []struct {
		name string
		b    []byte
	}{
		{"nil", nil},
		{"empty", []byte{}},
		{"infinity", []byte{0}},
		{"prefix only", []byte{2}},
		{"X without prefix", gx},
		{"X‖Y without prefix", cat(gx, gy)},
		{"0x04 ‖ X", cat([]byte{4}, gx)},
		{"0x00 ‖ X", cat([]byte{0}, gx)},
		{"0x01 ‖ X", cat([]byte{1}, gx)},
		{"0x05 ‖ X", cat([]byte{5}, gx)},
		{"0xff ‖ X", cat([]byte{0xff}, gx)},
		{"compressed, X = p", cat([]byte{2}, pBytes)},
		{"compressed, X = 2^256−1", cat([]byte{3}, bytes.Repeat([]byte{0xff}, 32))},
		{"compressed, X not on the curve", cat([]byte{2}, offCurveX().FillBytes(make([]byte, 32)))},
		{"compressed + a byte", cat([]byte{2}, gx, []byte{0})},
		{"compressed − a byte", cat([]byte{2}, gx[:31])},
		{"uncompressed, Y+1", cat([]byte{4}, gx, gyPlus1)},
		{"uncompressed, X = p", cat([]byte{4}, pBytes, gy)},
		{"uncompressed, Y = p", cat([]byte{4}, gx, pBytes)},
		{"uncompressed, zero", cat([]byte{4}, make([]byte, 64))},
		{"0x02 prefix, 65 bytes", cat([]byte{2}, gx, gy)},
		{"uncompressed + a byte", cat([]byte{4}, gx, gy, []byte{0})},
		{"uncompressed − a byte", cat([]byte{4}, gx, gy[:31])},
		{"text", []byte("not a public key, not at all, no....")},
	}
	for _, c := range cases {
		var pub *ecdsa.PublicKey
		var err error
		if p := catchPanic(func() { pub, err = signer.ParseSecp256k1PublicKey(c.b) }); p != nil {
			t.Errorf("Parse(%s) panics: %v", c.name, p)
			continue
		}
		if err == nil {
			x, y := eckey.Coordinates(pub)
			t.Errorf("Parse(%s = %x) = (%x, %x), nil; want an error", c.name, c.b, x, y)
			continue
		}
		wantErr(t, "Parse("+c.name+")", err, signer.ErrCorrupt)
		if pub != nil {
			t.Errorf("Parse(%s) returns a key with its error", c.name)
		}
	}
}

// TestParseSecp256k1PublicKeyHybrid: the doc allows compressed (33 bytes)
// and uncompressed (65) SEC 1 keys; the X9.62 "hybrid" forms 0x06 and 0x07
// are neither.
func TestParseSecp256k1PublicKeyHybrid(t *testing.T) {
	gx := k1Gx.FillBytes(make([]byte, 32))
	gy := k1Gy.FillBytes(make([]byte, 32))
	for _, prefix := range []byte{6, 7} {
		b := append(append([]byte{prefix}, gx...), gy...)
		if pub, err := signer.ParseSecp256k1PublicKey(b); err == nil {
			x, y := eckey.Coordinates(pub)
			t.Errorf("Parse(hybrid 0x%02x ‖ G) = (%x, %x), nil; want ErrCorrupt", prefix, x, y)
		}
	}
}

func TestMarshalSecp256k1PublicKeyErrors(t *testing.T) {
	c := signer.Secp256k1()
	cases := []struct {
		name string
		pub  *ecdsa.PublicKey
		want error
	}{
		{"P-256 key", testKey(t, signer.ECDSAP256, 0).Public().(*ecdsa.PublicKey), signer.ErrUnsupported},
		{"P-384 key", testKey(t, signer.ECDSAP384, 0).Public().(*ecdsa.PublicKey), signer.ErrUnsupported},
		{"P-256 curve, secp256k1 point", eckey.NewPublic(elliptic.P256(), k1Gx, k1Gy), signer.ErrUnsupported},
		{"nil", nil, signer.ErrUnsupported},
		{"no curve", eckey.NewPublic(nil, k1Gx, k1Gy), signer.ErrUnsupported},
		{"off the curve", eckey.NewPublic(c, k1Gx, new(big.Int).Add(k1Gy, big.NewInt(1))), signer.ErrCorrupt},
		{"X = p", eckey.NewPublic(c, new(big.Int).Set(k1P), k1Gy), signer.ErrCorrupt},
		{"−G", eckey.NewPublic(c, k1Gx, new(big.Int).Sub(k1P, k1Gy)), nil},
		{"zero", eckey.NewPublic(c, new(big.Int), new(big.Int)), signer.ErrCorrupt},
	}
	for _, tc := range cases {
		var b []byte
		var err error
		if p := catchPanic(func() { b, err = signer.MarshalSecp256k1PublicKey(tc.pub) }); p != nil {
			t.Errorf("Marshal(%s) panics: %v", tc.name, p)
			continue
		}
		if tc.want == nil {
			if err != nil || len(b) != 33 {
				t.Errorf("Marshal(%s) = %x, %v; want 33 bytes", tc.name, b, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("Marshal(%s) = %x, nil; want an error", tc.name, b)
			continue
		}
		wantErr(t, "Marshal("+tc.name+")", err, tc.want)
	}
}

// TestECDSAMalformedPublicKeys: keys whose coordinates are nil, negative
// or wider than the field are not keys; Verify and Marshal should refuse
// them (as crypto/ecdsa does) instead of panicking or reading another key
// into them.
func TestECDSAMalformedPublicKeys(t *testing.T) {
	msg := []byte("malformed key")
	for _, alg := range ecdsaAlgs {
		k := testKey(t, alg, 0)
		pub := k.Public().(*ecdsa.PublicKey)
		sig := signStd(t, k, msg)
		x, y := eckey.Coordinates(pub)
		keys := map[string]*ecdsa.PublicKey{
			"nil X":   eckey.NewPublic(pub.Curve, nil, y),
			"nil Y":   eckey.NewPublic(pub.Curve, x, nil),
			"nil X,Y": eckey.NewPublic(pub.Curve, nil, nil),
			"−X":      eckey.NewPublic(pub.Curve, new(big.Int).Neg(x), y),
			"−Y":      eckey.NewPublic(pub.Curve, x, new(big.Int).Neg(y)),
		}
		if x.BitLen() > 248 {
			// X·256 + 0xab: its first 32 big-endian bytes are X's.
			keys["X·256+0xab"] = eckey.NewPublic(pub.Curve, new(big.Int).Add(new(big.Int).Lsh(x, 8), big.NewInt(0xab)), y)
		}
		for name, bad := range keys {
			var err error
			if p := catchPanic(func() { err = alg.Verify(bad, msg, sig) }); p != nil {
				t.Errorf("%v.Verify with a key with %s panics: %v", alg, name, p)
			} else if err == nil {
				t.Errorf("%v.Verify with a key with %s = nil, want an error", alg, name)
			}
			if bx, by := eckey.Coordinates(bad); bx != nil && by != nil && ecdsa.Verify(bad, stdDigest(alg, msg), splitFirst(alg, sig), splitSecond(alg, sig)) {
				t.Errorf("%v: crypto/ecdsa accepts the key with %s; the test is wrong", alg, name)
			}
			if alg != signer.ECDSASecp256k1 {
				continue
			}
			var b []byte
			if p := catchPanic(func() { b, err = signer.MarshalSecp256k1PublicKey(bad) }); p != nil {
				t.Errorf("MarshalSecp256k1PublicKey with %s panics: %v", name, p)
			} else if err == nil {
				t.Errorf("MarshalSecp256k1PublicKey with %s = %x, nil; want an error", name, b)
			}
		}
	}
	for _, alg := range []signer.Algorithm{signer.RSAPKCS1v15, signer.RSAPSS} {
		var err error
		if p := catchPanic(func() { err = alg.Verify((*rsa.PublicKey)(nil), msg, make([]byte, 256)) }); p != nil {
			t.Errorf("%v.Verify((*rsa.PublicKey)(nil)) panics: %v", alg, p)
		} else if err == nil {
			t.Errorf("%v.Verify((*rsa.PublicKey)(nil)) = nil", alg)
		}
	}
}

func splitFirst(alg signer.Algorithm, raw []byte) *big.Int  { r, _ := splitRS(alg, raw); return r }
func splitSecond(alg signer.Algorithm, raw []byte) *big.Int { _, s := splitRS(alg, raw); return s }
