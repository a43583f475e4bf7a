package inprocess_test

import (
	"crypto/ecdsa"
	"encoding/asn1"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"os"
	"strings"
	"testing"

	"github.com/signerkit/signerkit/internal/eckey"
	"github.com/signerkit/signerkit/internal/refsecp256k1"
	"github.com/signerkit/signerkit/signer"
)

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// validatorFile is a priv_validator_key.json as read by the tests, apart
// from the package.
type validatorFile struct {
	raw       []byte
	pub, priv []byte
	fields    map[string]any
}

func readValidatorFile(t *testing.T, path string) validatorFile {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		PubKey  struct{ Value []byte } `json:"pub_key"`
		PrivKey struct{ Value []byte } `json:"priv_key"`
	}
	v := validatorFile{raw: raw}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &v.fields); err != nil {
		t.Fatal(err)
	}
	v.pub, v.priv = f.PubKey.Value, f.PrivKey.Value
	return v
}

// with returns the file with one top-level field replaced, or removed when
// value is nil. []byte values are written in base64, as the files write
// keys.
func (v validatorFile) with(t *testing.T, field string, value any) []byte {
	t.Helper()
	m := map[string]any{}
	for k, x := range v.fields {
		m[k] = x
	}
	if value == nil {
		delete(m, field)
	} else {
		m[field] = value
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// pemDER returns the bytes of the first PEM block of data.
func pemDER(t *testing.T, data []byte) []byte {
	t.Helper()
	b, _ := pem.Decode(data)
	if b == nil {
		t.Fatal("no PEM block")
	}
	return b.Bytes
}

// sec1 returns an "EC PRIVATE KEY" PEM block as SEC 1 lays it out, with
// the curve and public key left out when nil.
func sec1(t *testing.T, version int, d []byte, curve asn1.ObjectIdentifier, pub []byte) []byte {
	t.Helper()
	k := struct {
		Version    int
		PrivateKey []byte
		Curve      asn1.ObjectIdentifier `asn1:"optional,explicit,tag:0"`
		PublicKey  asn1.BitString        `asn1:"optional,explicit,tag:1"`
	}{version, d, curve, asn1.BitString{Bytes: pub, BitLength: 8 * len(pub)}}
	der, err := asn1.Marshal(k)
	if err != nil {
		t.Fatal(err)
	}
	return pemBlock("EC PRIVATE KEY", der)
}

// uncompressed returns 04 ‖ X ‖ Y of an ECDSA public key.
func uncompressed(pub *ecdsa.PublicKey) []byte {
	size := (pub.Curve.Params().BitSize + 7) / 8
	out := []byte{4}
	x, y := eckey.Coordinates(pub)
	out = append(out, x.FillBytes(make([]byte, size))...)
	return append(out, y.FillBytes(make([]byte, size))...)
}

// refPublic returns d·G on secp256k1, computed by the reference
// implementation.
func refPublic(d *big.Int) *ecdsa.PublicKey {
	x, y := refsecp256k1.PublicKey(d)
	return eckey.NewPublic(signer.Secp256k1(), x, y)
}

// leaks reports whether msg holds secret in any of the forms a key file
// or a careless error would write it: hex, base64, or the bytes
// themselves.
func leaks(msg string, secret []byte) bool {
	if len(secret) < 8 {
		return false
	}
	for _, form := range []string{
		hex.EncodeToString(secret), strings.ToUpper(hex.EncodeToString(secret)),
		base64.StdEncoding.EncodeToString(secret), base64.RawStdEncoding.EncodeToString(secret)[:len(secret)*4/3-2],
		string(secret),
	} {
		if strings.Contains(msg, form) {
			return true
		}
	}
	return false
}
