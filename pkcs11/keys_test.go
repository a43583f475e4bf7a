package pkcs11_test

import (
	"crypto/rsa"
	"crypto/x509"
	_ "embed"
	"encoding/pem"
	"errors"
	"sync"
	"testing"
)

// rsa2048PEM is a fixed 2048-bit RSA key in PKCS #8, for the tests that
// need an RSA key but not a fresh one: SoftHSM2 takes about half a second
// of CPU to generate one, crypto/rsa a random fraction of that. The tests
// of key generation itself (TestKeyStore, TestConformance) still generate
// theirs on the token. It is public: never use it for anything but tests.
//
//go:embed testdata/rsa2048.pem
var rsa2048PEM []byte

var parsedRSA2048 = sync.OnceValues(func() (*rsa.PrivateKey, error) {
	block, _ := pem.Decode(rsa2048PEM)
	if block == nil {
		return nil, errNotPEM
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	priv, ok := k.(*rsa.PrivateKey)
	if !ok || priv.N.BitLen() != 2048 {
		return nil, errNotRSA2048
	}
	priv.Precompute()
	return priv, nil
})

var (
	errNotPEM     = errors.New("testdata/rsa2048.pem is not PEM")
	errNotRSA2048 = errors.New("testdata/rsa2048.pem holds no 2048-bit RSA key")
)

// rsa2048 returns the fixed 2048-bit RSA key of testdata/rsa2048.pem. The
// tests share it: none may change it.
func rsa2048(t testing.TB) *rsa.PrivateKey {
	t.Helper()
	k, err := parsedRSA2048()
	if err != nil {
		t.Fatal(err)
	}
	return k
}
