package signer_test

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"errors"
	"math/big"
	"testing"

	"github.com/signerkit/signerkit/internal/eckey"
	"github.com/signerkit/signerkit/signer"
)

// ecdsaDERSeeds returns DER signatures, well-formed and malformed, made
// from a signature by each ECDSA algorithm's fixture key.
func ecdsaDERSeeds(f *testing.F) [][]byte {
	f.Helper()
	var seeds [][]byte
	one := big.NewInt(1)
	for _, alg := range ecdsaAlgs {
		k := testKey(f, alg, 0)
		msg := []byte("fuzz seed")
		der, err := k.Sign(nil, stdDigest(alg, msg), alg.Hash())
		if err != nil {
			f.Fatal(err)
		}
		if !ecdsa.VerifyASN1(k.Public().(*ecdsa.PublicKey), stdDigest(alg, msg), der) {
			f.Fatalf("%v: crypto/ecdsa rejects the seed signature", alg)
		}
		raw, err := signer.ECDSAToRaw(alg, der)
		if err != nil {
			f.Fatal(err)
		}
		r, s := splitRS(alg, raw)
		n := curveN(alg)
		seeds = append(seeds,
			der,
			derSig(r, new(big.Int).Sub(n, s)), // high S
			derSig(one, one),
			derSig(new(big.Int).Sub(n, one), new(big.Int).Rsh(n, 1)),
			derSig(n, s),
			derSig(r, new(big.Int)),
			derSig(new(big.Int).Neg(r), s),
			append(bytes.Clone(der), 0),
			der[:len(der)-1],
			derTLV(0x30, derInt(r), derInt(s), []byte{0x05, 0x00}),
		)
	}
	return seeds
}

func FuzzECDSAToRaw(f *testing.F) {
	for _, der := range ecdsaDERSeeds(f) {
		for _, alg := range []signer.Algorithm{signer.ECDSAP256, signer.ECDSAP384, signer.ECDSASecp256k1, signer.Ed25519} {
			f.Add(uint8(alg), der)
		}
	}
	f.Add(uint8(0), []byte{})
	f.Fuzz(func(t *testing.T, a uint8, der []byte) {
		alg := signer.Algorithm(a)
		raw, err := signer.ECDSAToRaw(alg, der)
		if !alg.IsECDSA() {
			if !errors.Is(err, signer.ErrUnsupported) || raw != nil {
				t.Fatalf("ECDSAToRaw(%v) = %x, %v; want ErrUnsupported", alg, raw, err)
			}
			return
		}
		if err != nil {
			if !errors.Is(err, signer.ErrInvalidSignature) || raw != nil {
				t.Fatalf("ECDSAToRaw(%v, %x) = %x, %v; want ErrInvalidSignature", alg, der, raw, err)
			}
			return
		}
		size, n := scalarSize(alg), curveN(alg)
		if len(raw) != 2*size {
			t.Fatalf("ECDSAToRaw(%v, %x) = %d bytes, want %d", alg, der, len(raw), 2*size)
		}
		r, s := splitRS(alg, raw)
		if r.Sign() <= 0 || s.Sign() <= 0 || r.Cmp(n) >= 0 || s.Cmp(n) >= 0 {
			t.Fatalf("ECDSAToRaw(%v, %x) = r %x, s %x: out of [1, n−1]", alg, der, r, s)
		}
		if alg == signer.ECDSASecp256k1 && s.Cmp(new(big.Int).Rsh(n, 1)) > 0 {
			t.Fatalf("ECDSAToRaw(secp256k1, %x) gives a high S %x", der, s)
		}
		asn, err := signer.ECDSAToASN1(alg, raw)
		if err != nil {
			t.Fatalf("ECDSAToASN1(%v, ECDSAToRaw(%x) = %x): %v", alg, der, raw, err)
		}
		if !bytes.Equal(asn, derSig(r, s)) {
			t.Fatalf("ECDSAToASN1(%v, %x) = %x, want the DER %x", alg, raw, asn, derSig(r, s))
		}
		raw2, err := signer.ECDSAToRaw(alg, asn)
		if err != nil || !bytes.Equal(raw2, raw) {
			t.Fatalf("ECDSAToRaw(%v, ECDSAToASN1(%x)) = %x, %v; want it back", alg, raw, raw2, err)
		}
		// DER is distinguished: what converts is the encoding of (r, s),
		// or for secp256k1 also of (r, n−s).
		if !bytes.Equal(der, asn) &&
			!(alg == signer.ECDSASecp256k1 && bytes.Equal(der, derSig(r, new(big.Int).Sub(n, s)))) {
			t.Fatalf("ECDSAToRaw(%v) accepts the non-DER %x as (r, s) = (%x, %x), whose DER is %x", alg, der, r, s, asn)
		}
	})
}

func FuzzECDSAToASN1(f *testing.F) {
	one := big.NewInt(1)
	for _, alg := range ecdsaAlgs {
		n := curveN(alg)
		sig := signStd(f, testKey(f, alg, 0), []byte("fuzz seed"))
		r, s := splitRS(alg, sig)
		for _, raw := range [][]byte{
			sig,
			joinRS(alg, r, new(big.Int).Sub(n, s)),
			joinRS(alg, one, one),
			joinRS(alg, n, one),
			joinRS(alg, one, new(big.Int)),
			sig[1:],
			append(bytes.Clone(sig), 0),
		} {
			f.Add(uint8(alg), raw)
			f.Add(uint8(signer.Ed25519), raw)
		}
	}
	f.Fuzz(func(t *testing.T, a uint8, raw []byte) {
		alg := signer.Algorithm(a)
		der, err := signer.ECDSAToASN1(alg, raw)
		if !alg.IsECDSA() {
			if !errors.Is(err, signer.ErrUnsupported) || der != nil {
				t.Fatalf("ECDSAToASN1(%v) = %x, %v; want ErrUnsupported", alg, der, err)
			}
			return
		}
		size, n := scalarSize(alg), curveN(alg)
		valid := len(raw) == 2*size
		var r, s *big.Int
		if valid {
			r, s = splitRS(alg, raw)
			valid = r.Sign() > 0 && s.Sign() > 0 && r.Cmp(n) < 0 && s.Cmp(n) < 0
		}
		if !valid {
			if !errors.Is(err, signer.ErrInvalidSignature) || der != nil {
				t.Fatalf("ECDSAToASN1(%v, %x) = %x, %v; want ErrInvalidSignature", alg, raw, der, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("ECDSAToASN1(%v, %x): %v", alg, raw, err)
		}
		if alg == signer.ECDSASecp256k1 && s.Cmp(new(big.Int).Rsh(n, 1)) > 0 {
			s.Sub(n, s)
		}
		if want := derSig(r, s); !bytes.Equal(der, want) {
			t.Fatalf("ECDSAToASN1(%v, %x) = %x, want %x", alg, raw, der, want)
		}
		back, err := signer.ECDSAToRaw(alg, der)
		if err != nil || !bytes.Equal(back, joinRS(alg, r, s)) {
			t.Fatalf("ECDSAToRaw(%v, ECDSAToASN1(%x)) = %x, %v; want %x", alg, raw, back, err, joinRS(alg, r, s))
		}
	})
}

func FuzzParseSecp256k1PublicKey(f *testing.F) {
	for n := range 2 {
		pub := testKey(f, signer.ECDSASecp256k1, n).Public().(*ecdsa.PublicKey)
		b, err := signer.MarshalSecp256k1PublicKey(pub)
		if err != nil {
			f.Fatal(err)
		}
		u := uncompressed(pub)
		f.Add(b)
		f.Add(u)
		f.Add(append([]byte{6 | u[64]&1}, u[1:]...)) // hybrid
		f.Add(append([]byte{5}, b[1:]...))
		f.Add(b[:32])
		f.Add(append(bytes.Clone(u), 0))
	}
	f.Add([]byte{})
	f.Add([]byte{0})
	f.Add(append([]byte{2}, k1P.FillBytes(make([]byte, 32))...))
	f.Add(append([]byte{3}, offCurveX().FillBytes(make([]byte, 32))...))

	seven := big.NewInt(7)
	f.Fuzz(func(t *testing.T, b []byte) {
		pub, err := signer.ParseSecp256k1PublicKey(b)
		if err != nil {
			if !errors.Is(err, signer.ErrCorrupt) || pub != nil {
				t.Fatalf("Parse(%x) = %v, %v; want nil, ErrCorrupt", b, pub, err)
			}
			return
		}
		if pub.Curve != signer.Secp256k1() {
			t.Fatalf("Parse(%x) key is on %v, not Secp256k1()", b, pub.Curve.Params().Name)
		}
		// On the curve, checked with math/big: 0 ≤ x, y < p, y² = x³ + 7.
		x, y := eckey.Coordinates(pub)
		if x.Sign() < 0 || y.Sign() < 0 || x.Cmp(k1P) >= 0 || y.Cmp(k1P) >= 0 {
			t.Fatalf("Parse(%x) = (%x, %x): coordinates out of range", b, x, y)
		}
		lhs := new(big.Int).Exp(y, big.NewInt(2), k1P)
		rhs := new(big.Int).Exp(x, big.NewInt(3), k1P)
		rhs.Add(rhs, seven).Mod(rhs, k1P)
		if lhs.Cmp(rhs) != 0 {
			t.Fatalf("Parse(%x) = (%x, %x), which is not on secp256k1", b, x, y)
		}
		// It is the point b encodes.
		xb := x.FillBytes(make([]byte, 32))
		switch {
		case len(b) == 33 && (b[0] == 2 || b[0] == 3):
			if !bytes.Equal(b[1:], xb) || y.Bit(0) != uint(b[0]&1) {
				t.Fatalf("Parse(%x) = (%x, %x), not the point it encodes", b, x, y)
			}
		case len(b) == 65 && b[0] == 4:
			if !bytes.Equal(b, uncompressed(pub)) {
				t.Fatalf("Parse(%x) = (%x, %x), not the point it encodes", b, x, y)
			}
		default:
			t.Fatalf("Parse accepts %x (%d bytes, prefix 0x%02x), not a SEC 1 compressed or uncompressed key", b, len(b), b[0])
		}
		m, err := signer.MarshalSecp256k1PublicKey(pub)
		if err != nil || len(m) != 33 {
			t.Fatalf("Marshal(Parse(%x)) = %x, %v; want 33 bytes", b, m, err)
		}
		if len(b) == 33 && !bytes.Equal(m, b) {
			t.Fatalf("Marshal(Parse(%x)) = %x", b, m)
		}
		again, err := signer.ParseSecp256k1PublicKey(m)
		if err != nil || !again.Equal(pub) {
			t.Fatalf("Parse(Marshal(Parse(%x))) = %v, %v; want the same key", b, again, err)
		}
		if err := signer.ECDSASecp256k1.CheckKey(pub); err != nil {
			t.Fatalf("CheckKey(Parse(%x)): %v", b, err)
		}
	})
}

// FuzzVerify checks random signatures and messages against one fixed key
// per algorithm: Verify never panics and never accepts, and the standard
// library agrees. The seeds are signatures by another key (so no mutation
// of them verifies) and near misses that no byte-level mutation repairs.
func FuzzVerify(f *testing.F) {
	algs := signer.Algorithms()
	pubs := make([]crypto.PublicKey, len(algs))
	msg := []byte("fuzz verify")
	for i, alg := range algs {
		pubs[i] = testKey(f, alg, 0).Public()
		other := signStd(f, testKey(f, alg, 1), msg)
		f.Add(uint8(i), msg, other)
		f.Add(uint8(i), msg, flipBit(other, 3))
		f.Add(uint8(i), msg, other[1:])
		f.Add(uint8(i), []byte{}, []byte{})
		f.Add(uint8(i), msg, make([]byte, len(other)))
		f.Add(uint8(i), msg, bytes.Repeat([]byte{0xff}, len(other)))
		if alg == signer.ECDSASecp256k1 {
			// Key 0's own signature with S replaced by n − S.
			sig := signStd(f, testKey(f, alg, 0), msg)
			r, s := splitRS(alg, sig)
			f.Add(uint8(i), msg, joinRS(alg, r, new(big.Int).Sub(k1N, s)))
		}
	}
	f.Fuzz(func(t *testing.T, a uint8, msg, sig []byte) {
		i := int(a) % len(algs)
		alg, pub := algs[i], pubs[i]
		err := alg.Verify(pub, msg, sig)
		if err == nil {
			t.Fatalf("%v.Verify(fixed key, %x, %x) = nil: a forgery, or a seed that verifies", alg, msg, sig)
		}
		if !errors.Is(err, signer.ErrInvalidSignature) {
			t.Fatalf("%v.Verify(fixed key, %x, %x) = %v, want ErrInvalidSignature", alg, msg, sig, err)
		}
		if stdVerify(alg, pub, msg, sig) == nil {
			t.Fatalf("%v: the standard library accepts (%x, %x) but Verify does not", alg, msg, sig)
		}
	})
}
