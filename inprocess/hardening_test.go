package inprocess_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/internal/eckey"
	"github.com/signerkit/signerkit/internal/memscan"
	"github.com/signerkit/signerkit/signer"
)

// identity is the encoding of the identity point, of order 1: a public key
// for which one constant signature verifies for every message.
var identity = append([]byte{1}, make([]byte, 31)...)

// TestSmallOrderKeysRefused: an Ed25519 key whose public half is a
// small-order point, given as a private key or in a
// priv_validator_key.json, is refused as such (issue 19, point 4).
func TestSmallOrderKeysRefused(t *testing.T) {
	priv := append(make([]byte, 32), identity...)
	_, err := inprocess.FromPrivateKey(ed25519.PrivateKey(priv), 0)
	if !errors.Is(err, signer.ErrInvalidKey) || !strings.Contains(err.Error(), "small order") {
		t.Errorf("FromPrivateKey with the identity as its public half: %v, want a small-order ErrInvalidKey", err)
	}
	file := fmt.Sprintf(`{"address":"00","pub_key":{"type":"tendermint/PubKeyEd25519","value":%q},"priv_key":{"type":"tendermint/PrivKeyEd25519","value":%q}}`,
		base64.StdEncoding.EncodeToString(identity), base64.StdEncoding.EncodeToString(priv))
	_, err = inprocess.ParseKeyFile([]byte(file))
	if !errors.Is(err, signer.ErrInvalidKey) || !strings.Contains(err.Error(), "small order") {
		t.Errorf("priv_validator_key.json with the identity as pub_key: %v, want a small-order ErrInvalidKey", err)
	}
	// A non-canonical encoding of a valid point: y = p+1 stands for y = 1.
	nonCanonical := []byte{0xee, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}
	_, err = inprocess.FromPrivateKey(ed25519.PrivateKey(append(make([]byte, 32), nonCanonical...)), 0)
	if !errors.Is(err, signer.ErrInvalidKey) || !strings.Contains(err.Error(), "canonical") {
		t.Errorf("FromPrivateKey with a non-canonical public half: %v", err)
	}
}

// TestPublicIsACopy: changing what Public returned does not change the
// Signer's key (issue 19, point 5).
func TestPublicIsACopy(t *testing.T) {
	t.Parallel()
	for _, alg := range []signer.Algorithm{signer.Ed25519, signer.ECDSAP256, signer.ECDSASecp256k1, signer.RSAPSS} {
		t.Run(alg.String(), func(t *testing.T) {
			k, err := inprocess.Generate(alg)
			if err != nil {
				t.Fatal(err)
			}
			defer k.Close()
			before := k.Public()
			switch p := k.Public().(type) {
			case ed25519.PublicKey:
				p[0] ^= 0xff
			case *ecdsa.PublicKey:
				x, _ := eckey.Coordinates(p)
				x.SetInt64(1)
				p.Curve = nil
			case *rsa.PublicKey:
				p.N.SetInt64(15)
				p.E = 3
			}
			if !before.(interface{ Equal(crypto.PublicKey) bool }).Equal(k.Public()) {
				t.Fatal("changing the key Public returned changed the Signer's")
			}
			msg := []byte("still signs")
			sig, err := k.SignContext(context.Background(), msg)
			if err != nil {
				t.Fatal(err)
			}
			if err := alg.Verify(k.Public(), msg, sig); err != nil {
				t.Fatalf("signature no longer verifies: %v", err)
			}
		})
	}
}

// TestEd25519NoResidue signs with a fresh Ed25519 key, closes the Signer
// and scans the whole process's memory for the seed (issue 19, point 1):
// crypto/ed25519 leaves copies in its key cache and in what
// NewKeyFromSeed computes; the Signer must leave none. A Signer that is
// still reachable after Close is the case that matters: crypto/ed25519's
// cache entry lives as long as the key's memory does.
func TestEd25519NoResidue(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's shadow memory is too large to scan")
	}
	if _, err := memscan.Count(); errors.Is(err, memscan.ErrUnsupported) {
		t.Skip(err)
	}
	for _, how := range []string{"FromSeed", "FromPrivateKey", "Reopen"} {
		t.Run(how, func(t *testing.T) {
			seed := make([]byte, ed25519.SeedSize)
			rand.Read(seed)
			p := memscan.NewPattern("seed", seed)
			var k *inprocess.Signer
			var err error
			switch how {
			case "FromSeed":
				k, err = inprocess.FromSeed(seed, signer.Ed25519)
			case "FromPrivateKey":
				priv := ed25519.PrivateKey(append(append(make([]byte, 0, 64), seed...), publicOf(t, seed)...))
				k, err = inprocess.FromPrivateKey(priv, 0)
				clear(priv)
			case "Reopen":
				var k0 *inprocess.Signer
				if k0, err = inprocess.FromSeed(seed, signer.Ed25519); err == nil {
					var s signer.Signer
					s, err = inprocess.Reopen(k0)
					k0.Close()
					k, _ = s.(*inprocess.Signer)
				}
			}
			clear(seed)
			if err != nil {
				t.Fatal(err)
			}
			msg := []byte("vote")
			for range 20 {
				sig, err := k.SignContext(context.Background(), msg)
				if err != nil || !ed25519.Verify(k.Public().(ed25519.PublicKey), msg, sig) {
					t.Fatal("sign failed or does not verify", err)
				}
				sig, err = k.Sign(nil, msg, &ed25519.Options{Context: "ctx"})
				if err != nil || ed25519.VerifyWithOptions(k.Public().(ed25519.PublicKey), msg, sig, &ed25519.Options{Context: "ctx"}) != nil {
					t.Fatal("Ed25519ctx sign failed or does not verify", err)
				}
			}
			k.Close()
			runtime.GC()
			runtime.GC()
			n, err := memscan.Count(p)
			if err != nil {
				t.Fatal(err)
			}
			if n[0] != 0 {
				t.Errorf("%d copies of the seed in memory after Close", n[0])
			}
			runtime.KeepAlive(k)
		})
	}
}

// publicOf derives the public key of seed the way the test can without
// leaving the seed anywhere: through a Signer it closes.
func publicOf(t *testing.T, seed []byte) []byte {
	k, err := inprocess.FromSeed(seed, signer.Ed25519)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	return k.Public().(ed25519.PublicKey)
}
