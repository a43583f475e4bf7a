package eckey_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"math/big"
	"testing"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"

	"github.com/signerkit/signerkit/internal/eckey"
	"github.com/signerkit/signerkit/internal/refsecp256k1"
)

// keys returns a P-256, a P-384 and a secp256k1 private key.
func keys(t *testing.T) []*ecdsa.PrivateKey {
	t.Helper()
	var out []*ecdsa.PrivateKey
	for _, c := range []elliptic.Curve{elliptic.P256(), elliptic.P384()} {
		k, err := ecdsa.GenerateKey(c, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, k)
	}
	k1, err := secp256k1.GeneratePrivateKey()
	if err != nil {
		t.Fatal(err)
	}
	return append(out, k1.ToECDSA())
}

// Coordinates and Scalar read what crypto/ecdsa's encodings hold: for the
// NIST curves, Bytes; for secp256k1, the reference implementation's d·G.
func TestCoordinatesAndScalar(t *testing.T) {
	for _, k := range keys(t) {
		name := k.Curve.Params().Name
		x, y := eckey.Coordinates(&k.PublicKey)
		d := eckey.Scalar(k)
		if x == nil || y == nil || d == nil {
			t.Fatalf("%s: nil field", name)
		}
		if name == "secp256k1" {
			rx, ry := refsecp256k1.PublicKey(d)
			if rx.Cmp(x) != 0 || ry.Cmp(y) != 0 {
				t.Errorf("%s: the coordinates are not the reference d·G", name)
			}
			continue
		}
		size := (k.Curve.Params().BitSize + 7) / 8
		pt, err := k.PublicKey.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		if new(big.Int).SetBytes(pt[1:1+size]).Cmp(x) != 0 || new(big.Int).SetBytes(pt[1+size:]).Cmp(y) != 0 {
			t.Errorf("%s: Coordinates differ from Bytes", name)
		}
		raw, err := k.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		if new(big.Int).SetBytes(raw).Cmp(d) != 0 {
			t.Errorf("%s: Scalar differs from Bytes", name)
		}
	}
}

// A key rebuilt from its fields is the same key: it signs, and crypto/ecdsa
// verifies the signature under the rebuilt public key.
func TestNewPrivateSigns(t *testing.T) {
	digest := sha256.Sum256([]byte("vote"))
	for _, k := range keys(t) {
		name := k.Curve.Params().Name
		x, y := eckey.Coordinates(&k.PublicKey)
		pub := eckey.NewPublic(k.Curve, new(big.Int).Set(x), new(big.Int).Set(y))
		if !pub.Equal(&k.PublicKey) {
			t.Fatalf("%s: NewPublic of the key's coordinates is another key", name)
		}
		priv := eckey.NewPrivate(pub, new(big.Int).Set(eckey.Scalar(k)))
		if !priv.Equal(k) {
			t.Fatalf("%s: NewPrivate of the key's fields is another key", name)
		}
		sig, err := ecdsa.SignASN1(rand.Reader, priv, digest[:])
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !ecdsa.VerifyASN1(&k.PublicKey, digest[:], sig) {
			t.Errorf("%s: the rebuilt key's signature does not verify", name)
		}
	}
}

// Clone shares no coordinate with the original, keeps nil coordinates nil,
// and the nil keys read as nil fields.
func TestCloneAndNil(t *testing.T) {
	for _, k := range keys(t) {
		c := eckey.Clone(&k.PublicKey)
		if !c.Equal(&k.PublicKey) {
			t.Fatalf("%s: the clone is another key", k.Curve.Params().Name)
		}
		cx, cy := eckey.Coordinates(c)
		cx.SetInt64(1)
		cy.SetInt64(2)
		if x, y := eckey.Coordinates(&k.PublicKey); x.Cmp(cx) == 0 || y.Cmp(cy) == 0 {
			t.Errorf("%s: changing the clone changed the original", k.Curve.Params().Name)
		}
	}
	half := eckey.Clone(eckey.NewPublic(elliptic.P256(), big.NewInt(3), nil))
	if x, y := eckey.Coordinates(half); x.Cmp(big.NewInt(3)) != 0 || y != nil {
		t.Errorf("Clone of (3, nil) = (%v, %v)", x, y)
	}
	if x, y := eckey.Coordinates(nil); x != nil || y != nil {
		t.Error("Coordinates(nil) is not (nil, nil)")
	}
	if eckey.Scalar(nil) != nil {
		t.Error("Scalar(nil) is not nil")
	}
}

// A copy of a key made with Clone can be changed without changing the key.
func ExampleClone() {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	c := eckey.Clone(&priv.PublicKey)
	x, _ := eckey.Coordinates(c)
	x.SetInt64(1)
	fmt.Println(c.Equal(&priv.PublicKey), priv.PublicKey.Equal(&priv.PublicKey))
	// Output: false true
}
