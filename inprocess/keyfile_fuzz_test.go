package inprocess_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/signer"
)

// FuzzParseKeyFile feeds ParseKeyFile anything: it never panics, refuses
// with one of the three sentinels it documents and the package named once,
// and what it accepts is a valid key that MarshalKeyFile writes back as a
// file holding the same key.
func FuzzParseKeyFile(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(keyfiles, "*"))
	for _, name := range files {
		if data, err := os.ReadFile(name); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"pub_key":{"@type":"/tm.PubKeySecp256k1","value":"AA=="},"priv_key":{"@type":"/tm.PrivKeySecp256k1","value":"AA=="}}`))
	f.Add([]byte("-----BEGIN EC PRIVATE KEY-----\nMAA=\n-----END EC PRIVATE KEY-----\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		priv, err := inprocess.ParseKeyFile(data)
		if err != nil {
			if priv != nil {
				t.Fatalf("a key with the error %v", err)
			}
			if !errors.Is(err, signer.ErrCorrupt) && !errors.Is(err, signer.ErrInvalidKey) && !errors.Is(err, signer.ErrUnsupported) {
				t.Fatalf("error %v wraps none of ErrCorrupt, ErrInvalidKey, ErrUnsupported", err)
			}
			if strings.Count(err.Error(), "inprocess:") != 1 {
				t.Fatalf("error %q names the package more than once", err)
			}
			return
		}
		var alg signer.Algorithm
		switch k := priv.(type) {
		case ed25519.PrivateKey:
			if len(k) != ed25519.PrivateKeySize {
				t.Fatalf("Ed25519 key of %d bytes", len(k))
			}
		case *ecdsa.PrivateKey:
		case *rsa.PrivateKey:
			if k.N.BitLen() < 2048 || k.N.BitLen() > 8192 {
				return // parsed, but not a size this package signs with
			}
			alg = signer.RSAPKCS1v15
		default:
			t.Fatalf("ParseKeyFile returned a %T", priv)
		}
		k, err := inprocess.FromPrivateKey(priv, alg)
		if err != nil {
			t.Fatalf("ParseKeyFile accepted a %T that FromPrivateKey refuses: %v", priv, err)
		}
		k.Close()
		out, err := inprocess.MarshalKeyFile(priv)
		if err != nil {
			t.Fatal(err)
		}
		back, err := inprocess.ParseKeyFile(out)
		if err != nil {
			t.Fatalf("the file MarshalKeyFile wrote does not parse: %v", err)
		}
		if !back.(crypto.Signer).Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(priv.(crypto.Signer).Public()) {
			t.Fatal("MarshalKeyFile wrote another key")
		}
	})
}
