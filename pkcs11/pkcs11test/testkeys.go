package pkcs11test

import (
	"crypto/rsa"
	"crypto/x509"
	_ "embed"
	"encoding/pem"
	"fmt"
	"sync"
)

//go:embed testkeys/rsa4096.pem
var rsa4096PEM []byte

// RSA4096 returns a fixed 4096-bit RSA key for tests and benchmarks, which
// would otherwise spend seconds (a random number of them) generating one.
// It is public: never use it for anything else.
var RSA4096 = sync.OnceValues(func() (*rsa.PrivateKey, error) {
	block, _ := pem.Decode(rsa4096PEM)
	if block == nil {
		return nil, fmt.Errorf("pkcs11test: testkeys/rsa4096.pem is not PEM")
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("pkcs11test: %w", err)
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("pkcs11test: testkeys/rsa4096.pem holds a %T", k)
	}
	return rk, nil
})
