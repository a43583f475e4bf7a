package signer_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strings"
	"sync"
	"testing"

	"github.com/signerkit/signerkit/bls"
	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/internal/eckey"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// ---------------------------------------------------------------------------
// Shared fixtures and helpers for algorithm_test.go, verify_test.go and
// verify_fuzz_test.go.

// catchPanic runs f and returns what it panicked with, or nil.
func catchPanic(f func()) (p any) {
	defer func() { p = recover() }()
	f()
	return nil
}

func mustHex(s string) *big.Int {
	v, ok := new(big.Int).SetString(s, 16)
	if !ok {
		panic("bad hex constant " + s)
	}
	return v
}

// secp256k1 domain parameters (SEC 2 v2, 2.4.1), written out so that the
// tests do not take them from the library under test.
var (
	k1P  = mustHex("fffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2f")
	k1N  = mustHex("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141")
	k1Gx = mustHex("79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798")
	k1Gy = mustHex("483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8")
)

// curveN is the group order of an ECDSA algorithm's curve, from the
// standard library for the NIST curves and from k1N for secp256k1.
func curveN(alg signer.Algorithm) *big.Int {
	switch alg {
	case signer.ECDSAP256:
		return elliptic.P256().Params().N
	case signer.ECDSAP384:
		return elliptic.P384().Params().N
	case signer.ECDSASecp256k1:
		return k1N
	}
	panic(fmt.Sprintf("no curve for %v", alg))
}

// scalarSize is the byte length of r and s in alg's raw form.
func scalarSize(alg signer.Algorithm) int {
	if alg == signer.ECDSAP384 {
		return 48
	}
	return 32
}

var ecdsaAlgs = []signer.Algorithm{signer.ECDSAP256, signer.ECDSAP384, signer.ECDSASecp256k1}

// stdDigest hashes msg as alg does, with the standard library's hash
// packages called directly.
func stdDigest(alg signer.Algorithm, msg []byte) []byte {
	switch alg {
	case signer.Ed25519:
		return msg
	case signer.ECDSAP384:
		d := sha512.Sum384(msg)
		return d[:]
	}
	d := sha256.Sum256(msg)
	return d[:]
}

// stdVerify checks sig, in alg's wire form, over msg under pub with the
// standard library only (crypto/ed25519, crypto/ecdsa, crypto/rsa),
// independently of signer's own Verify. secp256k1 signatures must be low-S.
func stdVerify(alg signer.Algorithm, pub crypto.PublicKey, msg, sig []byte) error {
	switch alg {
	case signer.Ed25519:
		k, ok := pub.(ed25519.PublicKey)
		if !ok || len(k) != ed25519.PublicKeySize {
			return fmt.Errorf("%T is not an Ed25519 public key", pub)
		}
		if len(sig) != ed25519.SignatureSize || !ed25519.Verify(k, msg, sig) {
			return errors.New("crypto/ed25519 rejects the signature")
		}
		return nil
	case signer.ECDSAP256, signer.ECDSAP384, signer.ECDSASecp256k1:
		k, ok := pub.(*ecdsa.PublicKey)
		if !ok {
			return fmt.Errorf("%T is not an ECDSA public key", pub)
		}
		size := scalarSize(alg)
		if len(sig) != 2*size {
			return fmt.Errorf("raw ECDSA signature is %d bytes, want %d", len(sig), 2*size)
		}
		r, s := new(big.Int).SetBytes(sig[:size]), new(big.Int).SetBytes(sig[size:])
		if alg == signer.ECDSASecp256k1 && s.Cmp(new(big.Int).Rsh(k1N, 1)) > 0 {
			return errors.New("secp256k1 signature has a high S")
		}
		if !ecdsa.Verify(k, stdDigest(alg, msg), r, s) {
			return errors.New("crypto/ecdsa rejects the signature")
		}
		return nil
	case signer.RSAPKCS1v15, signer.RSAPSS:
		k, ok := pub.(*rsa.PublicKey)
		if !ok {
			return fmt.Errorf("%T is not an RSA public key", pub)
		}
		if alg == signer.RSAPSS {
			return rsa.VerifyPSS(k, crypto.SHA256, stdDigest(alg, msg), sig, &rsa.PSSOptions{SaltLength: sha256.Size})
		}
		return rsa.VerifyPKCS1v15(k, crypto.SHA256, stdDigest(alg, msg), sig)
	}
	return fmt.Errorf("no standard-library verifier for %v", alg)
}

// mustStdVerify fails t unless the standard library accepts sig.
func mustStdVerify(t testing.TB, alg signer.Algorithm, pub crypto.PublicKey, msg, sig []byte) {
	t.Helper()
	if err := stdVerify(alg, pub, msg, sig); err != nil {
		t.Fatalf("%v: standard library: %v (sig %x)", alg, err, sig)
	}
}

// RSA keys are slow to make: two are made once per test binary, in
// parallel, and shared by RSAPKCS1v15 and RSAPSS fixtures.
var (
	rsaOnce sync.Once
	rsaPriv [2]*rsa.PrivateKey
	rsaErr  error
)

func rsaKeys(t testing.TB) [2]*rsa.PrivateKey {
	t.Helper()
	rsaOnce.Do(func() {
		var wg sync.WaitGroup
		var errs [2]error
		for i := range rsaPriv {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rsaPriv[i], errs[i] = rsa.GenerateKey(rand.Reader, 2048)
			}()
		}
		wg.Wait()
		rsaErr = errors.Join(errs[:]...)
	})
	if rsaErr != nil {
		t.Fatalf("generating RSA keys: %v", rsaErr)
	}
	return rsaPriv
}

type keyID struct {
	alg signer.Algorithm
	n   int
}

var (
	keysMu sync.Mutex
	keys   = map[keyID]*inprocess.Signer{}
)

// testKey returns fixture key n (0 or 1) for alg; the two differ. Keys
// other than RSA are derived from fixed seeds, so fuzz failures replay with
// the same keys. Keys are shared and never closed.
func testKey(t testing.TB, alg signer.Algorithm, n int) *inprocess.Signer {
	t.Helper()
	keysMu.Lock()
	defer keysMu.Unlock()
	if k := keys[keyID{alg, n}]; k != nil {
		return k
	}
	var k *inprocess.Signer
	var err error
	label := fmt.Sprintf("signerkit test key %v #%d", alg, n)
	switch {
	case alg.IsRSA():
		k, err = inprocess.FromPrivateKey(rsaKeys(t)[n], alg)
	case alg == signer.ECDSAP384:
		seed := sha512.Sum384([]byte(label))
		k, err = inprocess.FromSeed(seed[:], alg)
	default:
		seed := sha256.Sum256([]byte(label))
		k, err = inprocess.FromSeed(seed[:], alg)
	}
	if err != nil {
		t.Fatalf("fixture key %v #%d: %v", alg, n, err)
	}
	if got := k.Algorithm(); got != alg {
		t.Fatalf("fixture key %v #%d has Algorithm %v", alg, n, got)
	}
	keys[keyID{alg, n}] = k
	return k
}

// signStd signs msg with k.SignContext and checks the result with the
// standard library before returning it.
func signStd(t testing.TB, k *inprocess.Signer, msg []byte) []byte {
	t.Helper()
	sig, err := k.SignContext(context.Background(), msg)
	if err != nil {
		t.Fatalf("%v SignContext: %v", k.Algorithm(), err)
	}
	mustStdVerify(t, k.Algorithm(), k.Public(), msg, sig)
	return sig
}

// pubSigner is a crypto.Signer that has only a public key: no Algorithm
// and no Unwrap method.
type pubSigner struct{ pub crypto.PublicKey }

func (p pubSigner) Public() crypto.PublicKey { return p.pub }
func (p pubSigner) Sign(io.Reader, []byte, crypto.SignerOpts) ([]byte, error) {
	return nil, errors.New("pubSigner does not sign")
}

// fullSigner is a signer.Signer without an Algorithm method.
type fullSigner struct{ pubSigner }

func (fullSigner) SignContext(context.Context, []byte) ([]byte, error) {
	return nil, errors.New("fullSigner does not sign")
}
func (fullSigner) Close() error { return nil }

// algSigner says its algorithm whatever its key.
type algSigner struct {
	fullSigner
	alg signer.Algorithm
}

func (a algSigner) Algorithm() signer.Algorithm { return a.alg }

// unwrapper is a crypto.Signer that wraps inner through Unwrap and has no
// Algorithm method of its own.
type unwrapper struct {
	pub   crypto.PublicKey
	inner signer.Signer
}

func (u unwrapper) Public() crypto.PublicKey { return u.pub }
func (u unwrapper) Sign(io.Reader, []byte, crypto.SignerOpts) ([]byte, error) {
	return nil, errors.New("unwrapper does not sign")
}
func (u unwrapper) Unwrap() signer.Signer { return u.inner }

// ---------------------------------------------------------------------------
// Algorithm

var wantNames = map[signer.Algorithm]string{
	signer.Ed25519:        "ed25519",
	signer.ECDSAP256:      "p256",
	signer.ECDSAP384:      "p384",
	signer.ECDSASecp256k1: "secp256k1",
	signer.RSAPKCS1v15:    "rsa-pkcs1v15",
	signer.RSAPSS:         "rsa-pss",
	signer.BLS12381MinPK:  "bls12381-minpk",
	signer.BLS12381MinSig: "bls12381-minsig",
}

func TestAlgorithmsList(t *testing.T) {
	algs := signer.Algorithms()
	want := []signer.Algorithm{signer.Ed25519, signer.ECDSAP256, signer.ECDSAP384, signer.ECDSASecp256k1, signer.RSAPKCS1v15, signer.RSAPSS}
	if len(algs) != len(want) {
		t.Fatalf("Algorithms() = %v, want %v", algs, want)
	}
	for i := range want {
		if algs[i] != want[i] {
			t.Fatalf("Algorithms() = %v, want %v", algs, want)
		}
	}
	// The result is the caller's to change.
	algs[0] = 0
	if signer.Algorithms()[0] != signer.Ed25519 {
		t.Fatal("Algorithms() returns a shared slice")
	}
}

func TestAlgorithmStringParseRoundTrip(t *testing.T) {
	seen := map[string]signer.Algorithm{}
	for _, a := range signer.AllAlgorithms() {
		name := a.String()
		if name != wantNames[a] {
			t.Errorf("Algorithm(%d).String() = %q, want %q", uint8(a), name, wantNames[a])
		}
		if prev, dup := seen[name]; dup {
			t.Errorf("%v and %d share the name %q", prev, uint8(a), name)
		}
		seen[name] = a
		got, err := signer.ParseAlgorithm(name)
		if err != nil || got != a {
			t.Errorf("ParseAlgorithm(%q) = %v, %v; want %v, nil", name, got, err, uint8(a))
		}
	}
}

func TestParseAlgorithmUnknown(t *testing.T) {
	for _, name := range []string{
		"", "Ed25519", "ED25519", "ed25519 ", " ed25519", "ed25519\x00", "ed448",
		"p-256", "P256", "p521", "secp256r1", "rsa", "rsa-pss-sha256", "RSA-PSS",
		"Algorithm(0)", "Algorithm(1)", "Algorithm(7)", "0", "1",
	} {
		a, err := signer.ParseAlgorithm(name)
		if err == nil {
			t.Errorf("ParseAlgorithm(%q) = %v, nil; want an error", name, a)
			continue
		}
		if !errors.Is(err, signer.ErrUnsupported) {
			t.Errorf("ParseAlgorithm(%q) error %v does not wrap ErrUnsupported", name, err)
		}
		if a != 0 {
			t.Errorf("ParseAlgorithm(%q) = %v with an error, want 0", name, a)
		}
	}
}

func TestAlgorithmValid(t *testing.T) {
	for i := 0; i < 256; i++ {
		a := signer.Algorithm(i)
		_, defined := wantNames[a]
		if a.Valid() != defined {
			t.Errorf("Algorithm(%d).Valid() = %v, want %v", i, a.Valid(), defined)
		}
		if defined {
			continue
		}
		if got, want := a.String(), fmt.Sprintf("Algorithm(%d)", i); got != want {
			t.Errorf("Algorithm(%d).String() = %q, want %q", i, got, want)
		}
		if _, err := signer.ParseAlgorithm(a.String()); !errors.Is(err, signer.ErrUnsupported) {
			t.Errorf("ParseAlgorithm(%q) error = %v, want ErrUnsupported", a.String(), err)
		}
		if a.Hash() != 0 || a.Curve() != nil || a.IsECDSA() || a.IsRSA() {
			t.Errorf("invalid Algorithm(%d): Hash %v, Curve %v, IsECDSA %v, IsRSA %v; want 0, nil, false, false",
				i, a.Hash(), a.Curve(), a.IsECDSA(), a.IsRSA())
		}
		for _, other := range signer.Algorithms() {
			if err := a.CheckKey(testKey(t, other, 0).Public()); !errors.Is(err, signer.ErrUnsupported) {
				t.Errorf("Algorithm(%d).CheckKey(%v key) = %v, want ErrUnsupported", i, other, err)
			}
		}
	}
}

func TestAlgorithmHash(t *testing.T) {
	want := map[signer.Algorithm]crypto.Hash{
		signer.Ed25519:        0,
		signer.ECDSAP256:      crypto.SHA256,
		signer.ECDSAP384:      crypto.SHA384,
		signer.ECDSASecp256k1: crypto.SHA256,
		signer.RSAPKCS1v15:    crypto.SHA256,
		signer.RSAPSS:         crypto.SHA256,
	}
	for _, a := range signer.Algorithms() {
		if got := a.Hash(); got != want[a] {
			t.Errorf("%v.Hash() = %v, want %v", a, got, want[a])
		}
	}
}

func TestAlgorithmSignerOpts(t *testing.T) {
	for _, a := range signer.Algorithms() {
		opts := a.SignerOpts()
		if opts == nil {
			t.Fatalf("%v.SignerOpts() = nil", a)
		}
		if opts.HashFunc() != a.Hash() {
			t.Errorf("%v.SignerOpts().HashFunc() = %v, want %v", a, opts.HashFunc(), a.Hash())
		}
		switch a {
		case signer.RSAPSS:
			pss, ok := opts.(*rsa.PSSOptions)
			if !ok {
				t.Fatalf("RSAPSS.SignerOpts() is %T, want *rsa.PSSOptions", opts)
			}
			if pss.SaltLength != rsa.PSSSaltLengthEqualsHash || pss.Hash != crypto.SHA256 {
				t.Errorf("RSAPSS.SignerOpts() = %+v, want SaltLength PSSSaltLengthEqualsHash, Hash SHA256", *pss)
			}
		default:
			if h, ok := opts.(crypto.Hash); !ok || h != a.Hash() {
				t.Errorf("%v.SignerOpts() = %#v (%T), want crypto.Hash %v", a, opts, opts, a.Hash())
			}
		}
	}
}

// TestAlgorithmSignerOptsSign checks that crypto.Signer.Sign with
// a.SignerOpts() over a.Digest(msg) makes the same kind of signature as
// SignContext: one that the standard library and Algorithm.Verify accept
// (after ECDSAToRaw for ECDSA).
func TestAlgorithmSignerOptsSign(t *testing.T) {
	msg := []byte("signer opts")
	for _, a := range signer.Algorithms() {
		t.Run(a.String(), func(t *testing.T) {
			t.Parallel()
			k := testKey(t, a, 0)
			digest := a.Digest(msg)
			sig, err := k.Sign(rand.Reader, digest, a.SignerOpts())
			if err != nil {
				t.Fatalf("Sign: %v", err)
			}
			wire := sig
			switch a {
			case signer.Ed25519:
				if !ed25519.Verify(k.Public().(ed25519.PublicKey), msg, sig) {
					t.Fatal("crypto/ed25519 rejects the Sign signature")
				}
			case signer.ECDSAP256, signer.ECDSAP384, signer.ECDSASecp256k1:
				if !ecdsa.VerifyASN1(k.Public().(*ecdsa.PublicKey), stdDigest(a, msg), sig) {
					t.Fatal("crypto/ecdsa rejects the ASN.1 Sign signature")
				}
				if wire, err = signer.ECDSAToRaw(a, sig); err != nil {
					t.Fatalf("ECDSAToRaw: %v", err)
				}
			case signer.RSAPKCS1v15:
				if err := rsa.VerifyPKCS1v15(k.Public().(*rsa.PublicKey), crypto.SHA256, stdDigest(a, msg), sig); err != nil {
					t.Fatalf("crypto/rsa rejects the Sign signature: %v", err)
				}
			case signer.RSAPSS:
				err := rsa.VerifyPSS(k.Public().(*rsa.PublicKey), crypto.SHA256, stdDigest(a, msg), sig, &rsa.PSSOptions{SaltLength: sha256.Size})
				if err != nil {
					t.Fatalf("crypto/rsa rejects the PSS Sign signature with a 32-byte salt: %v", err)
				}
			}
			mustStdVerify(t, a, k.Public(), msg, wire)
			if err := a.Verify(k.Public(), msg, wire); err != nil {
				t.Fatalf("Verify of the Sign signature: %v", err)
			}
		})
	}
}

func TestAlgorithmDigest(t *testing.T) {
	for _, msg := range [][]byte{nil, {}, []byte("abc"), bytes.Repeat([]byte{0xa5}, 1000)} {
		s256 := sha256.Sum256(msg)
		s384 := sha512.Sum384(msg)
		want := map[signer.Algorithm][]byte{
			signer.Ed25519:        msg,
			signer.ECDSAP256:      s256[:],
			signer.ECDSAP384:      s384[:],
			signer.ECDSASecp256k1: s256[:],
			signer.RSAPKCS1v15:    s256[:],
			signer.RSAPSS:         s256[:],
		}
		for _, a := range signer.Algorithms() {
			got := a.Digest(msg)
			if !bytes.Equal(got, want[a]) {
				t.Errorf("%v.Digest(%d bytes) = %x, want %x", a, len(msg), got, want[a])
			}
			if h := a.Hash(); h != 0 && len(got) != h.Size() {
				t.Errorf("%v.Digest is %d bytes, %v makes %d", a, len(got), h, h.Size())
			}
		}
	}
	// A known answer, so the test does not only compare crypto/sha256 with
	// itself: SHA-256("abc") (FIPS 180-2, B.1).
	const abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if got := fmt.Sprintf("%x", signer.ECDSASecp256k1.Digest([]byte("abc"))); got != abc {
		t.Errorf("secp256k1.Digest(\"abc\") = %s, want %s", got, abc)
	}
}

func TestAlgorithmCurve(t *testing.T) {
	for _, a := range []signer.Algorithm{signer.Ed25519, signer.RSAPKCS1v15, signer.RSAPSS} {
		if c := a.Curve(); c != nil {
			t.Errorf("%v.Curve() = %v, want nil", a, c.Params().Name)
		}
	}
	if signer.ECDSAP256.Curve() != elliptic.P256() {
		t.Error("ECDSAP256.Curve() is not elliptic.P256()")
	}
	if signer.ECDSAP384.Curve() != elliptic.P384() {
		t.Error("ECDSAP384.Curve() is not elliptic.P384()")
	}
	if signer.ECDSASecp256k1.Curve() != signer.Secp256k1() {
		t.Error("ECDSASecp256k1.Curve() is not Secp256k1()")
	}
}

func TestSecp256k1CurveParams(t *testing.T) {
	c := signer.Secp256k1()
	if c == nil {
		t.Fatal("Secp256k1() = nil")
	}
	p := c.Params()
	if p.Name != "secp256k1" || p.BitSize != 256 {
		t.Errorf("Secp256k1 Name %q BitSize %d, want secp256k1 256", p.Name, p.BitSize)
	}
	for _, v := range []struct {
		name      string
		got, want *big.Int
	}{{"P", p.P, k1P}, {"N", p.N, k1N}, {"B", p.B, big.NewInt(7)}, {"Gx", p.Gx, k1Gx}, {"Gy", p.Gy, k1Gy}} {
		if v.got == nil || v.got.Cmp(v.want) != 0 {
			t.Errorf("Secp256k1 %s = %v, want %x", v.name, v.got, v.want)
		}
	}
	// The adaptor's IsOnCurve is what crypto/ecdsa's generic path calls.
	//lint:ignore SA1019 the test is of the deprecated elliptic.Curve adaptor itself
	if !c.IsOnCurve(k1Gx, k1Gy) {
		t.Error("Secp256k1 says G is not on the curve")
	}
	//lint:ignore SA1019 the test is of the deprecated elliptic.Curve adaptor itself
	if c.IsOnCurve(k1Gx, new(big.Int).Add(k1Gy, big.NewInt(1))) {
		t.Error("Secp256k1 says (Gx, Gy+1) is on the curve")
	}
}

func TestAlgorithmIsECDSAIsRSA(t *testing.T) {
	for _, a := range signer.Algorithms() {
		wantECDSA := a == signer.ECDSAP256 || a == signer.ECDSAP384 || a == signer.ECDSASecp256k1
		wantRSA := a == signer.RSAPKCS1v15 || a == signer.RSAPSS
		if a.IsECDSA() != wantECDSA || a.IsRSA() != wantRSA {
			t.Errorf("%v: IsECDSA %v, IsRSA %v; want %v, %v", a, a.IsECDSA(), a.IsRSA(), wantECDSA, wantRSA)
		}
		if (a.Curve() != nil) != a.IsECDSA() {
			t.Errorf("%v: Curve %v but IsECDSA %v", a, a.Curve(), a.IsECDSA())
		}
	}
}

// namedKey is a public key under test and the algorithms that accept it.
type namedKey struct {
	name   string
	pub    crypto.PublicKey
	accept []signer.Algorithm
}

// publicKeys lists well-formed keys of every kind and keys that no
// algorithm accepts.
func publicKeys(t testing.TB) []namedKey {
	t.Helper()
	p224, err := ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p521, err := ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p256Priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	x25519, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	edPub := testKey(t, signer.Ed25519, 0).Public().(ed25519.PublicKey)
	p256 := testKey(t, signer.ECDSAP256, 0).Public().(*ecdsa.PublicKey)
	p256x, p256y := eckey.Coordinates(p256)
	rsaPub := testKey(t, signer.RSAPSS, 0).Public().(*rsa.PublicKey)
	_, edPriv, _ := ed25519.GenerateKey(rand.Reader)
	return []namedKey{
		{"ed25519", edPub, []signer.Algorithm{signer.Ed25519}},
		{"p256", p256, []signer.Algorithm{signer.ECDSAP256}},
		{"p384", testKey(t, signer.ECDSAP384, 0).Public(), []signer.Algorithm{signer.ECDSAP384}},
		{"secp256k1", testKey(t, signer.ECDSASecp256k1, 0).Public(), []signer.Algorithm{signer.ECDSASecp256k1}},
		{"rsa", rsaPub, []signer.Algorithm{signer.RSAPKCS1v15, signer.RSAPSS}},

		{"nil", nil, nil},
		{"ed25519 31 bytes", edPub[:31], nil},
		{"ed25519 33 bytes", append(append(ed25519.PublicKey{}, edPub...), 0), nil},
		{"ed25519 empty", ed25519.PublicKey{}, nil},
		{"ed25519 as []byte", []byte(edPub), nil},
		{"*ed25519.PublicKey", &edPub, nil},
		{"ed25519.PrivateKey", edPriv, nil},
		{"nil *ecdsa.PublicKey", (*ecdsa.PublicKey)(nil), nil},
		{"ecdsa without curve", eckey.NewPublic(nil, p256x, p256y), nil},
		{"ecdsa.PublicKey value", *p256, nil},
		{"p224", &p224.PublicKey, nil},
		{"p521", &p521.PublicKey, nil},
		{"*ecdsa.PrivateKey P-256", p256Priv, nil},
		{"*ecdh.PublicKey", x25519.PublicKey(), nil},
		{"rsa.PublicKey value", *rsaPub, nil},
		{"*rsa.PrivateKey", rsaKeys(t)[0], nil},
		{"string", "ed25519", nil},
	}
}

func TestAlgorithmCheckKey(t *testing.T) {
	for _, k := range publicKeys(t) {
		for i := 0; i < 256; i++ {
			a := signer.Algorithm(i)
			want := false
			for _, acc := range k.accept {
				want = want || acc == a
			}
			err := a.CheckKey(k.pub)
			switch {
			case want && err != nil:
				t.Errorf("%v.CheckKey(%s) = %v, want nil", a, k.name, err)
			case !want && err == nil:
				t.Errorf("%v.CheckKey(%s) = nil, want an error", a, k.name)
			case !want && !errors.Is(err, signer.ErrUnsupported):
				t.Errorf("%v.CheckKey(%s) = %v, does not wrap ErrUnsupported", a, k.name, err)
			}
		}
	}
}

// ---------------------------------------------------------------------------
// AlgorithmOf

func TestAlgorithmOfAlgorithmMethod(t *testing.T) {
	for _, a := range signer.Algorithms() {
		k := testKey(t, a, 0)
		if got, err := signer.AlgorithmOf(k); got != a || err != nil {
			t.Errorf("AlgorithmOf(%v inprocess key) = %v, %v; want %v, nil", a, got, err, a)
		}
	}
	// Algorithm() wins over what the key implies.
	ed := testKey(t, signer.Ed25519, 0).Public()
	s := algSigner{fullSigner{pubSigner{ed}}, signer.RSAPSS}
	if got, err := signer.AlgorithmOf(s); got != signer.RSAPSS || err != nil {
		t.Errorf("AlgorithmOf(signer with Algorithm() RSAPSS, Ed25519 key) = %v, %v; want rsa-pss, nil", got, err)
	}
}

func TestAlgorithmOfUnwrap(t *testing.T) {
	for _, a := range signer.Algorithms() {
		k := testKey(t, a, 0)
		once := signertrace.Instrument(k)
		twice := signertrace.Instrument(once)
		for name, s := range map[string]crypto.Signer{"Instrument": once, "Instrument∘Instrument": twice} {
			if got, err := signer.AlgorithmOf(s); got != a || err != nil {
				t.Errorf("AlgorithmOf(%s(%v key)) = %v, %v; want %v, nil", name, a, got, err, a)
			}
		}
	}

	rsaPub := testKey(t, signer.RSAPSS, 0).Public()
	edPub := testKey(t, signer.Ed25519, 0).Public()
	for _, tc := range []struct {
		name    string
		s       crypto.Signer
		want    signer.Algorithm
		wantErr error
	}{
		// An RSA key says nothing, but the wrapped signer does.
		{"unwrapper→algSigner", unwrapper{rsaPub, algSigner{fullSigner{pubSigner{rsaPub}}, signer.RSAPKCS1v15}}, signer.RSAPKCS1v15, nil},
		{"unwrapper→Instrument→key", unwrapper{rsaPub, signertrace.Instrument(testKey(t, signer.RSAPSS, 0))}, signer.RSAPSS, nil},
		// Nothing in the chain says: the key decides.
		{"unwrapper→nil, Ed25519 key", unwrapper{edPub, nil}, signer.Ed25519, nil},
		{"unwrapper→fullSigner, Ed25519 key", unwrapper{edPub, fullSigner{pubSigner{edPub}}}, signer.Ed25519, nil},
		{"unwrapper→nil, RSA key", unwrapper{rsaPub, nil}, 0, signer.ErrUnsupported},
		{"Instrument→fullSigner, RSA key", signertrace.Instrument(fullSigner{pubSigner{rsaPub}}), 0, signer.ErrUnsupported},
	} {
		got, err := signer.AlgorithmOf(tc.s)
		if tc.wantErr != nil {
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("AlgorithmOf(%s) = %v, %v; want an error wrapping %v", tc.name, got, err, tc.wantErr)
			}
			continue
		}
		if got != tc.want || err != nil {
			t.Errorf("AlgorithmOf(%s) = %v, %v; want %v, nil", tc.name, got, err, tc.want)
		}
	}
}

func TestAlgorithmOfPublicKey(t *testing.T) {
	p256, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	_, edPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	// Standard-library private keys are crypto.Signers without Algorithm.
	for _, tc := range []struct {
		name string
		s    crypto.Signer
		want signer.Algorithm
	}{
		{"ed25519.PrivateKey", edPriv, signer.Ed25519},
		{"*ecdsa.PrivateKey P-256", p256, signer.ECDSAP256},
		{"*ecdsa.PrivateKey P-384", p384, signer.ECDSAP384},
	} {
		if got, err := signer.AlgorithmOf(tc.s); got != tc.want || err != nil {
			t.Errorf("AlgorithmOf(%s) = %v, %v; want %v, nil", tc.name, got, err, tc.want)
		}
	}
	for _, k := range publicKeys(t) {
		got, err := signer.AlgorithmOf(pubSigner{k.pub})
		if len(k.accept) == 1 {
			if got != k.accept[0] || err != nil {
				t.Errorf("AlgorithmOf(signer with a %s key) = %v, %v; want %v, nil", k.name, got, err, k.accept[0])
			}
			continue
		}
		// RSA keys are ambiguous; the others are not supported.
		if err == nil || !errors.Is(err, signer.ErrUnsupported) {
			t.Errorf("AlgorithmOf(signer with a %s key) = %v, %v; want an error wrapping ErrUnsupported", k.name, got, err)
		}
	}
}

func TestAlgorithmOfRSAPrivateKey(t *testing.T) {
	// *rsa.PrivateKey is a crypto.Signer with neither Algorithm nor Unwrap.
	var s crypto.Signer = rsaKeys(t)[0]
	a, err := signer.AlgorithmOf(s)
	if err == nil || !errors.Is(err, signer.ErrUnsupported) {
		t.Fatalf("AlgorithmOf(*rsa.PrivateKey) = %v, %v; want an error wrapping ErrUnsupported", a, err)
	}
	if !strings.Contains(err.Error(), "RSA") {
		t.Errorf("AlgorithmOf(*rsa.PrivateKey) error %q does not mention RSA", err)
	}
}

// ---------------------------------------------------------------------------
// BLS

func TestBLSAlgorithms(t *testing.T) {
	bls := signer.BLSAlgorithms()
	if len(bls) != 2 || bls[0] != signer.BLS12381MinPK || bls[1] != signer.BLS12381MinSig {
		t.Fatalf("BLSAlgorithms() = %v", bls)
	}
	all := signer.AllAlgorithms()
	if want := append(signer.Algorithms(), bls...); fmt.Sprint(all) != fmt.Sprint(want) {
		t.Fatalf("AllAlgorithms() = %v, want %v", all, want)
	}
	if len(all) != len(wantNames) {
		t.Fatalf("AllAlgorithms() has %d algorithms, %d are named", len(all), len(wantNames))
	}
	for _, a := range signer.Algorithms() {
		if a.IsBLS() {
			t.Errorf("Algorithms() lists the BLS algorithm %v", a)
		}
	}
	msg := []byte("bls signs the message itself")
	for _, a := range bls {
		if !a.Valid() || !a.IsBLS() || a.IsECDSA() || a.IsRSA() || a.Curve() != nil || a.Hash() != 0 {
			t.Errorf("%v: Valid %v IsBLS %v IsECDSA %v IsRSA %v Curve %v Hash %v", a, a.Valid(), a.IsBLS(), a.IsECDSA(), a.IsRSA(), a.Curve(), a.Hash())
		}
		if !bytes.Equal(a.Digest(msg), msg) {
			t.Errorf("%v.Digest changed the message", a)
		}
		if h, ok := a.SignerOpts().(crypto.Hash); !ok || h != 0 {
			t.Errorf("%v.SignerOpts() = %v, want crypto.Hash(0)", a, a.SignerOpts())
		}
	}
}

// fakeBLSKey is a signer.BLSPublicKey whose verification is scripted, to
// check what signer does with the key's answer.
type fakeBLSKey struct {
	alg signer.Algorithm
	err error
}

func (k *fakeBLSKey) Algorithm() signer.Algorithm {
	if k == nil {
		return 0
	}
	return k.alg
}
func (k *fakeBLSKey) Bytes() []byte                         { return []byte{1} }
func (k *fakeBLSKey) VerifySignature(msg, sig []byte) error { return k.err }

func TestBLSCheckKeyAndVerify(t *testing.T) {
	minpk := &fakeBLSKey{alg: signer.BLS12381MinPK}
	if err := signer.BLS12381MinPK.CheckKey(minpk); err != nil {
		t.Errorf("CheckKey(min-pk key) = %v", err)
	}
	if got, err := signer.AlgorithmOf(pubSigner{minpk}); got != signer.BLS12381MinPK || err != nil {
		t.Errorf("AlgorithmOf(signer with a min-pk key) = %v, %v", got, err)
	}
	for _, k := range []crypto.PublicKey{minpk, (*fakeBLSKey)(nil), &fakeBLSKey{alg: signer.Ed25519}, &fakeBLSKey{}} {
		if err := signer.BLS12381MinSig.CheckKey(k); !errors.Is(err, signer.ErrUnsupported) {
			t.Errorf("BLS12381MinSig.CheckKey(%#v) = %v, want ErrUnsupported", k, err)
		}
		if err := signer.BLS12381MinSig.Verify(k, nil, nil); !errors.Is(err, signer.ErrUnsupported) {
			t.Errorf("BLS12381MinSig.Verify(%#v) = %v, want ErrUnsupported", k, err)
		}
	}
	// A key that is not a BLS key in the eyes of the other algorithms.
	for _, a := range signer.Algorithms() {
		if err := a.CheckKey(minpk); !errors.Is(err, signer.ErrUnsupported) {
			t.Errorf("%v.CheckKey(min-pk key) = %v", a, err)
		}
	}
	// The key's verdict, with ErrInvalidSignature added when the key's
	// error does not carry it.
	if err := signer.BLS12381MinPK.Verify(minpk, []byte("m"), []byte("s")); err != nil {
		t.Errorf("Verify with a key that accepts = %v", err)
	}
	for _, keyErr := range []error{errors.New("no"), fmt.Errorf("bad: %w", signer.ErrInvalidSignature)} {
		k := &fakeBLSKey{alg: signer.BLS12381MinPK, err: keyErr}
		if err := signer.BLS12381MinPK.Verify(k, nil, nil); !errors.Is(err, signer.ErrInvalidSignature) || !errors.Is(err, keyErr) {
			t.Errorf("Verify with a key that says %v = %v", keyErr, err)
		}
	}
}

// TestBLSVerifyPackageBLS runs signer.Verify on keys and signatures of
// package bls, when the build has it (cgo), checked by circl as well.
func TestBLSVerifyPackageBLS(t *testing.T) {
	for _, a := range signer.BLSAlgorithms() {
		s, err := bls.FromSeed(bytes.Repeat([]byte{byte(a)}, 32), a)
		if errors.Is(err, signer.ErrUnsupported) {
			t.Skip("package bls is not available in this build (no cgo)")
		}
		if err != nil {
			t.Fatal(err)
		}
		msg := []byte("signer.Verify and package bls")
		sig, err := s.SignContext(context.Background(), msg)
		if err != nil {
			t.Fatal(err)
		}
		if err := signertest.VerifyStd(a, s.Public(), msg, sig); err != nil {
			t.Fatalf("%v: circl: %v", a, err)
		}
		if err := a.Verify(s.Public(), msg, sig); err != nil {
			t.Errorf("%v.Verify = %v", a, err)
		}
		if got, err := signer.AlgorithmOf(s); got != a || err != nil {
			t.Errorf("AlgorithmOf = %v, %v", got, err)
		}
		if err := a.Verify(s.Public(), []byte("other"), sig); !errors.Is(err, signer.ErrInvalidSignature) {
			t.Errorf("%v.Verify of another message = %v", a, err)
		}
		for _, other := range signer.BLSAlgorithms() {
			if other != a {
				if err := other.Verify(s.Public(), msg, sig); !errors.Is(err, signer.ErrUnsupported) {
					t.Errorf("%v.Verify with a %v key = %v", other, a, err)
				}
			}
		}
		if err := a.Verify(testKey(t, signer.Ed25519, 0).Public(), msg, sig); !errors.Is(err, signer.ErrUnsupported) {
			t.Errorf("%v.Verify with an Ed25519 key = %v", a, err)
		}
		s.Close()
	}
}
