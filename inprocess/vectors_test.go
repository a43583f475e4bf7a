package inprocess_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/big"
	"os"
	"testing"

	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/internal/eckey"
	"github.com/signerkit/signerkit/internal/refsecp256k1"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

// TestRFC8032 checks FromSeed and signing against the Ed25519 test vectors
// of RFC 8032 section 7.1, kept in testdata.
func TestRFC8032(t *testing.T) {
	raw, err := os.ReadFile("testdata/rfc8032_ed25519.json")
	if err != nil {
		t.Fatal(err)
	}
	var vectors []struct{ Name, Secret, Public, Message, Signature string }
	if err := json.Unmarshal(raw, &vectors); err != nil {
		t.Fatal(err)
	}
	if len(vectors) < 3 {
		t.Fatalf("only %d vectors", len(vectors))
	}
	for _, v := range vectors {
		t.Run(v.Name, func(t *testing.T) {
			key, err := inprocess.FromSeed(unhex(t, v.Secret), signer.Ed25519)
			if err != nil {
				t.Fatal(err)
			}
			defer key.Close()
			if got := hex.EncodeToString(key.Public().(ed25519.PublicKey)); got != v.Public {
				t.Errorf("public key %s, want %s", got, v.Public)
			}
			msg := unhex(t, v.Message)
			sig, err := key.SignContext(context.Background(), msg)
			if err != nil {
				t.Fatal(err)
			}
			if got := hex.EncodeToString(sig); got != v.Signature {
				t.Errorf("signature %s, want %s", got, v.Signature)
			}
			if !ed25519.Verify(key.Public().(ed25519.PublicKey), msg, sig) {
				t.Error("crypto/ed25519 rejects the signature")
			}
		})
	}
}

// TestSecp256k1Independent checks secp256k1 signatures, made with decred's
// implementation, against a textbook one that shares no code with it
// (internal/refsecp256k1), and against crypto/ecdsa.
func TestSecp256k1Independent(t *testing.T) {
	t.Parallel()
	for i := range 50 {
		key, err := inprocess.Generate(signer.ECDSASecp256k1)
		if err != nil {
			t.Fatal(err)
		}
		pub := key.Public().(*ecdsa.PublicKey)
		compressed, err := signer.MarshalSecp256k1PublicKey(pub)
		if err != nil {
			t.Fatal(err)
		}
		x, y, err := refsecp256k1.ParsePublicKey(compressed)
		if px, py := eckey.Coordinates(pub); err != nil || x.Cmp(px) != 0 || y.Cmp(py) != 0 {
			t.Fatalf("reference parse of %x: %v", compressed, err)
		}
		msg := make([]byte, i*20)
		rand.Read(msg)
		h := sha256.Sum256(msg)

		raw, err := key.SignContext(context.Background(), msg)
		if err != nil {
			t.Fatal(err)
		}
		r, s := new(big.Int).SetBytes(raw[:32]), new(big.Int).SetBytes(raw[32:])
		if !refsecp256k1.Verify(x, y, h[:], r, s) {
			t.Fatalf("reference rejects SignContext signature %x", raw)
		}
		if !refsecp256k1.IsLowS(s) {
			t.Fatalf("SignContext signature has a high S: %x", raw)
		}
		if !ecdsa.Verify(pub, h[:], r, s) {
			t.Fatal("crypto/ecdsa rejects the SignContext signature")
		}
		h[0] ^= 1
		if refsecp256k1.Verify(x, y, h[:], r, s) {
			t.Fatal("reference accepts the signature for another digest")
		}
		h[0] ^= 1

		der, err := key.Sign(nil, h[:], crypto.SHA256)
		if err != nil {
			t.Fatal(err)
		}
		if !ecdsa.VerifyASN1(pub, h[:], der) {
			t.Fatal("crypto/ecdsa rejects the Sign signature")
		}
		again, err := signer.ECDSAToRaw(signer.ECDSASecp256k1, der)
		if err != nil {
			t.Fatal(err)
		}
		r2, s2 := new(big.Int).SetBytes(again[:32]), new(big.Int).SetBytes(again[32:])
		if !refsecp256k1.Verify(x, y, h[:], r2, s2) {
			t.Fatal("reference rejects the Sign signature")
		}
		key.Close()
	}
}

// TestSecp256k1FromSeed checks the public key FromSeed derives against the
// reference scalar multiplication.
func TestSecp256k1FromSeed(t *testing.T) {
	for range 20 {
		d, err := rand.Int(rand.Reader, refsecp256k1.N())
		if err != nil || d.Sign() == 0 {
			continue
		}
		key, err := inprocess.FromSeed(d.FillBytes(make([]byte, 32)), signer.ECDSASecp256k1)
		if err != nil {
			t.Fatal(err)
		}
		x, y := refsecp256k1.PublicKey(d)
		pub := key.Public().(*ecdsa.PublicKey)
		if px, py := eckey.Coordinates(pub); px.Cmp(x) != 0 || py.Cmp(y) != 0 {
			t.Fatalf("public key of %x differs from the reference", d)
		}
	}
}

func TestFromSeedRejects(t *testing.T) {
	n256 := elliptic.P256().Params().N.FillBytes(make([]byte, 32))
	k1n := refsecp256k1.N().FillBytes(make([]byte, 32))
	cases := []struct {
		name string
		alg  signer.Algorithm
		seed []byte
		want error
	}{
		{"ed25519 short", signer.Ed25519, make([]byte, 31), signer.ErrInvalidKey},
		{"p256 zero", signer.ECDSAP256, make([]byte, 32), signer.ErrInvalidKey},
		{"p256 n", signer.ECDSAP256, n256, signer.ErrInvalidKey},
		{"p384 short", signer.ECDSAP384, make([]byte, 32), signer.ErrInvalidKey},
		{"secp256k1 zero", signer.ECDSASecp256k1, make([]byte, 32), signer.ErrInvalidKey},
		{"secp256k1 n", signer.ECDSASecp256k1, k1n, signer.ErrInvalidKey},
		{"secp256k1 long", signer.ECDSASecp256k1, make([]byte, 33), signer.ErrInvalidKey},
		{"rsa", signer.RSAPSS, make([]byte, 32), signer.ErrUnsupported},
		{"invalid algorithm", signer.Algorithm(0), make([]byte, 32), signer.ErrUnsupported},
	}
	for _, tc := range cases {
		if _, err := inprocess.FromSeed(tc.seed, tc.alg); !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestFromSeedP256MatchesStdlib(t *testing.T) {
	for _, curve := range []elliptic.Curve{elliptic.P256(), elliptic.P384()} {
		priv, err := ecdsa.GenerateKey(curve, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		alg := signer.ECDSAP256
		if curve == elliptic.P384() {
			alg = signer.ECDSAP384
		}
		key, err := inprocess.FromSeed(must(priv.Bytes()), alg)
		if err != nil {
			t.Fatal(err)
		}
		if !priv.PublicKey.Equal(key.Public()) {
			t.Errorf("%v: FromSeed derived another public key", alg)
		}
		msg := []byte("same key")
		sig, err := key.SignContext(context.Background(), msg)
		if err != nil {
			t.Fatal(err)
		}
		if err := signertest.VerifyStd(alg, &priv.PublicKey, msg, sig); err != nil {
			t.Error(err)
		}
	}
}

func TestFromPrivateKey(t *testing.T) {
	_, edPriv, _ := ed25519.GenerateKey(rand.Reader)
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	// FromPrivateKey of a secp256k1 *ecdsa.PrivateKey: rebuild one from
	// the reference curve's scalar.
	d, _ := rand.Int(rand.Reader, refsecp256k1.N())
	d.Add(d, big.NewInt(1)).Mod(d, refsecp256k1.N())
	x, y := refsecp256k1.PublicKey(d)
	k1Priv := eckey.NewPrivate(eckey.NewPublic(signer.Secp256k1(), x, y), d)

	cases := []struct {
		name string
		priv crypto.PrivateKey
		alg  signer.Algorithm
		want signer.Algorithm
	}{
		{"ed25519 inferred", edPriv, 0, signer.Ed25519},
		{"p256 inferred", p256, 0, signer.ECDSAP256},
		{"secp256k1 inferred", k1Priv, 0, signer.ECDSASecp256k1},
		{"rsa pss", rsaKey, signer.RSAPSS, signer.RSAPSS},
		{"rsa pkcs1", rsaKey, signer.RSAPKCS1v15, signer.RSAPKCS1v15},
	}
	for _, tc := range cases {
		key, err := inprocess.FromPrivateKey(tc.priv, tc.alg)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if key.Algorithm() != tc.want {
			t.Errorf("%s: algorithm %v, want %v", tc.name, key.Algorithm(), tc.want)
		}
		msg := []byte(tc.name)
		sig, err := key.SignContext(context.Background(), msg)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if err := signertest.VerifyStd(tc.want, tc.priv.(crypto.Signer).Public(), msg, sig); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		key.Close()
	}
	// The RSA key is copied: what the caller does to it afterwards does
	// not reach the Signer.
	rk, err := inprocess.FromPrivateKey(rsaKey, signer.RSAPSS)
	if err != nil {
		t.Fatal(err)
	}
	saved := new(big.Int).Set(rsaKey.D)
	rsaKey.D.SetInt64(1)
	if sig, err := rk.SignContext(context.Background(), []byte("m")); err != nil || signertest.VerifyStd(signer.RSAPSS, rsaKey.Public(), []byte("m"), sig) != nil {
		t.Errorf("the Signer followed a change to the caller's RSA key: %v", err)
	}
	rsaKey.D.Set(saved)
	rk.Close()
	if err := rsaKey.Validate(); err != nil {
		t.Errorf("Close wiped the caller's RSA key: %v", err)
	}

	// Closing the wrapper wipes its copy, not the caller's key.
	key, _ := inprocess.FromPrivateKey(edPriv, 0)
	key.Close()
	if sig := ed25519.Sign(edPriv, []byte("still here")); !ed25519.Verify(edPriv.Public().(ed25519.PublicKey), []byte("still here"), sig) {
		t.Error("Close wiped the caller's Ed25519 key")
	}

	refused := []struct {
		name string
		priv crypto.PrivateKey
		alg  signer.Algorithm
		want error
	}{
		{"rsa without a scheme", rsaKey, 0, signer.ErrUnsupported},
		{"ed25519 as p256", edPriv, signer.ECDSAP256, signer.ErrUnsupported},
		{"not a key", "secret", 0, signer.ErrUnsupported},
		{"short ed25519", ed25519.PrivateKey(make([]byte, 10)), signer.Ed25519, signer.ErrInvalidKey},
		{"nil ecdsa", (*ecdsa.PrivateKey)(nil), 0, signer.ErrInvalidKey},
		{"nil rsa", (*rsa.PrivateKey)(nil), signer.RSAPSS, signer.ErrInvalidKey},
		{"secp256k1 D ≥ 2^256", withD(k1Priv, new(big.Int).Lsh(big.NewInt(1), 256)), 0, signer.ErrInvalidKey},
		{"secp256k1 D negative", withD(k1Priv, new(big.Int).Neg(d)), 0, signer.ErrInvalidKey},
		{"secp256k1 D = n", withD(k1Priv, refsecp256k1.N()), 0, signer.ErrInvalidKey},
		{"secp256k1 D of another key", withD(k1Priv, new(big.Int).Add(d, big.NewInt(1))), 0, signer.ErrInvalidKey},
		{"p256 D of another key", withD(p256, new(big.Int).Add(new(big.Int).SetBytes(must(p256.Bytes())), big.NewInt(1))), 0, signer.ErrInvalidKey},
		{"ed25519 seed of one key, public half of another", mixedEd25519(), 0, signer.ErrInvalidKey},
		{"typed nil of another signer type", (*inprocess.Signer)(nil), 0, signer.ErrUnsupported},
		{"rsa 1024", rsa1024(t), signer.RSAPSS, signer.ErrUnsupported},
	}
	for _, tc := range refused {
		if _, err := inprocess.FromPrivateKey(tc.priv, tc.alg); !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestGenerateRSARejects(t *testing.T) {
	if _, err := inprocess.GenerateRSA(signer.RSAPSS, 1024); !errors.Is(err, signer.ErrUnsupported) {
		t.Errorf("1024-bit RSA: %v", err)
	}
	if _, err := inprocess.GenerateRSA(signer.Ed25519, 2048); !errors.Is(err, signer.ErrUnsupported) {
		t.Errorf("RSA key for Ed25519: %v", err)
	}
	if _, err := inprocess.Generate(signer.Algorithm(42)); !errors.Is(err, signer.ErrUnsupported) {
		t.Errorf("Generate(42): %v", err)
	}
}

// TestEd25519Variants checks Ed25519ph and Ed25519ctx through Sign, which
// the in-process key offers beyond the conformance minimum.
func TestEd25519Variants(t *testing.T) {
	key, _ := inprocess.Generate(signer.Ed25519)
	pub := key.Public().(ed25519.PublicKey)
	msg := []byte("variant")
	ph := sha512Sum(msg)
	sig, err := key.Sign(nil, ph, &ed25519.Options{Hash: crypto.SHA512})
	if err != nil {
		t.Fatal(err)
	}
	if err := ed25519.VerifyWithOptions(pub, ph, sig, &ed25519.Options{Hash: crypto.SHA512}); err != nil {
		t.Errorf("Ed25519ph: %v", err)
	}
	sig, err = key.Sign(nil, msg, &ed25519.Options{Context: "ctx"})
	if err != nil {
		t.Fatal(err)
	}
	if err := ed25519.VerifyWithOptions(pub, msg, sig, &ed25519.Options{Context: "ctx"}); err != nil {
		t.Errorf("Ed25519ctx: %v", err)
	}
	for _, opts := range []crypto.SignerOpts{nil, (*ed25519.Options)(nil), crypto.SHA256} {
		if _, err := key.Sign(nil, msg, opts); err == nil {
			t.Errorf("Sign with opts %#v succeeded", opts)
		}
	}
}

func mixedEd25519() ed25519.PrivateKey {
	_, a, _ := ed25519.GenerateKey(rand.Reader)
	b, _, _ := ed25519.GenerateKey(rand.Reader)
	return append(a.Seed(), b...)
}

func rsa1024(t *testing.T) *rsa.PrivateKey {
	t.Setenv("GODEBUG", "rsa1024min=0") // let the standard library make one
	k, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// withD returns a copy of priv with its scalar replaced.
func withD(priv *ecdsa.PrivateKey, d *big.Int) *ecdsa.PrivateKey {
	return eckey.NewPrivate(&priv.PublicKey, d)
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sha512Sum(b []byte) []byte {
	h := sha512.Sum512(b)
	return h[:]
}
