//go:build cgo

package pkcs11_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"encoding/asn1"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	p11 "github.com/miekg/pkcs11"

	"github.com/signerkit/signerkit/internal/eckey"
	"github.com/signerkit/signerkit/pkcs11"
	"github.com/signerkit/signerkit/pkcs11/pkcs11test"
	"github.com/signerkit/signerkit/signer"
)

// ckkECEdwards is CKK_EC_EDWARDS (PKCS#11 3.0).
const ckkECEdwards = 0x40

// TestSmallOrderEd25519KeyRefused puts an Ed25519 private key on the token
// beside a public key object, same CKA_ID and label, whose CKA_EC_POINT is
// a small-order or non-canonically encoded point: opening the key must
// fail with ErrInvalidKey rather than give a Signer whose Public() lets one
// constant signature verify for every message.
func TestSmallOrderEd25519KeyRefused(t *testing.T) {
	ctx := context.Background()
	_, tok := openToken(t)
	for i, h := range []string{
		"0100000000000000000000000000000000000000000000000000000000000000", // the identity
		"ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // order 2
		"c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a", // order 8
		"eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // the identity, not canonical
	} {
		_, priv, _ := ed25519.GenerateKey(rand.Reader)
		label := "degenerate-" + string(rune('a'+i))
		ki, err := tok.ImportKey(ctx, priv, signer.Ed25519, label)
		if err != nil {
			t.Fatalf("ImportKey: %v", err)
		}
		id, _ := hex.DecodeString(ki.ID)
		n, err := tok.DestroyObjects(ctx, []*p11.Attribute{
			p11.NewAttribute(p11.CKA_CLASS, p11.CKO_PUBLIC_KEY),
			p11.NewAttribute(p11.CKA_ID, id),
		})
		if err != nil || n != 1 {
			t.Fatalf("destroying the public key object: %d, %v", n, err)
		}
		point, _ := asn1.Marshal(unhex(h))
		params, _ := asn1.Marshal(asn1.ObjectIdentifier{1, 3, 101, 112})
		if err := tok.CreateObject(ctx, []*p11.Attribute{
			p11.NewAttribute(p11.CKA_CLASS, p11.CKO_PUBLIC_KEY),
			p11.NewAttribute(p11.CKA_KEY_TYPE, ckkECEdwards),
			p11.NewAttribute(p11.CKA_TOKEN, true),
			p11.NewAttribute(p11.CKA_LABEL, label),
			p11.NewAttribute(p11.CKA_ID, id),
			p11.NewAttribute(p11.CKA_VERIFY, true),
			p11.NewAttribute(p11.CKA_EC_PARAMS, params),
			p11.NewAttribute(p11.CKA_EC_POINT, point),
		}); err != nil {
			t.Fatalf("C_CreateObject of a public key with point %s: %v", h, err)
		}
		k, err := openKey(ctx, tok, ki.Ref())
		if !errors.Is(err, signer.ErrInvalidKey) {
			if k != nil {
				t.Errorf("point %s: opened, Public() = %x; want ErrInvalidKey", h, k.Public())
				k.Close()
			} else {
				t.Errorf("point %s: OpenKey: %v, want ErrInvalidKey", h, err)
			}
		}
		keys, err := tok.ListKeys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, ki := range keys {
			if ki.Label == label {
				t.Errorf("point %s: ListKeys lists the key with public key %x", h, ki.Public)
			}
		}
	}
}

// TestPublicReturnsCopies: what Public and Info return is the caller's;
// changing it changes nothing for the Signer or the next caller.
func TestPublicReturnsCopies(t *testing.T) {
	_, tok := openToken(t)
	for _, alg := range []signer.Algorithm{signer.Ed25519, signer.ECDSAP256, signer.RSAPKCS1v15} {
		k := makeKey(t, tok, alg, "copies-"+alg.String())
		orig := k.Public()
		want := pkcs11.CopyPublic(orig) // a copy of our own to compare with
		for _, pub := range []crypto.PublicKey{orig, k.Info().Public} {
			switch p := pub.(type) {
			case ed25519.PublicKey:
				for i := range p {
					p[i] = 0
				}
				p[0] = 1 // the identity point
			case *ecdsa.PublicKey:
				x, y := eckey.Coordinates(p)
				x.SetInt64(1)
				y.SetInt64(2)
				p.Curve = nil
			case *rsa.PublicKey:
				p.N.SetInt64(3)
				p.E = 1
			}
		}
		for _, pub := range []crypto.PublicKey{k.Public(), k.Info().Public} {
			if !pub.(interface{ Equal(crypto.PublicKey) bool }).Equal(want) {
				t.Errorf("%v: after the caller changed what Public returned, Public = %v, want %v", alg, pub, want)
			}
		}
		signAndVerify(t, k)
	}
}

// TestSignTimeout: crypto.Signer's Sign, which has no context, gives up
// after Config.SignTimeout when the token does not answer, and the token
// signs again once it does.
func TestSignTimeout(t *testing.T) {
	const timeout = 300 * time.Millisecond
	_, tok := openToken(t, pkcs11.WithFaults, func(c *pkcs11.Config) { c.SignTimeout = timeout })
	k := generateKey(t, tok, signer.Ed25519, "timeout")
	msg := []byte("to a token that hangs")
	release := tok.Hang()
	released := false
	defer func() {
		if !released {
			release()
		}
	}()
	type result struct {
		sig []byte
		err error
	}
	ch := make(chan result, 1)
	start := time.Now()
	go func() {
		sig, err := k.Sign(rand.Reader, msg, crypto.Hash(0))
		ch <- result{sig, err}
	}()
	select {
	case r := <-ch:
		took := time.Since(start)
		if !errors.Is(r.err, context.DeadlineExceeded) {
			t.Errorf("Sign to a hung token: %x, %v; want context.DeadlineExceeded", r.sig, r.err)
		}
		if took < timeout {
			t.Errorf("Sign gave up after %v, before SignTimeout %v", took, timeout)
		}
	case <-time.After(10 * time.Second):
		release()
		released = true
		<-ch
		t.Fatalf("Sign to a hung token still blocked after 10 s with SignTimeout %v", timeout)
	}
	release()
	released = true
	// The abandoned sign finishes and gives its session back.
	deadline := time.Now().Add(5 * time.Second)
	for tok.BusySessions() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := tok.BusySessions(); n != 0 {
		t.Errorf("%d sessions still busy after the token answered", n)
	}
	sig, err := k.Sign(rand.Reader, msg, crypto.Hash(0))
	if err != nil || !ed25519.Verify(k.Public().(ed25519.PublicKey), msg, sig) {
		t.Errorf("Sign after the token answered again: %x, %v", sig, err)
	}
	if pkcs11.DefaultSignTimeout != 10*time.Second {
		t.Errorf("DefaultSignTimeout = %v, documented as 10 s", pkcs11.DefaultSignTimeout)
	}
}

// TestSignatureLength: an Ed25519 or RSA signature of the wrong length from
// the token is refused with ErrProtocol, through SignContext and Sign.
func TestSignatureLength(t *testing.T) {
	ctx := context.Background()
	_, tok := openToken(t)
	msg := []byte("length")
	for _, alg := range []signer.Algorithm{signer.Ed25519, signer.RSAPKCS1v15, signer.RSAPSS, signer.ECDSAP256} {
		k := makeKey(t, tok, alg, "length-"+alg.String())
		digest := msg
		if alg.Hash() != 0 {
			digest = alg.Digest(msg)
		}
		for name, mangle := range map[string]func([]byte) []byte{
			"short": func(s []byte) []byte { return s[:len(s)-1] },
			"long":  func(s []byte) []byte { return append(s, 0) },
			"empty": func([]byte) []byte { return []byte{} },
			"twice": func(s []byte) []byte { return append(s, s...) },
		} {
			k.MangleSignatures(mangle)
			if sig, err := k.SignContext(ctx, msg); !errors.Is(err, signer.ErrProtocol) {
				t.Errorf("%v, %s signature: SignContext = %x, %v; want ErrProtocol", alg, name, sig, err)
			}
			if sig, err := k.Sign(rand.Reader, digest, alg.SignerOpts()); !errors.Is(err, signer.ErrProtocol) {
				t.Errorf("%v, %s signature: Sign = %x, %v; want ErrProtocol", alg, name, sig, err)
			}
		}
		k.MangleSignatures(nil)
		signAndVerify(t, k)
	}
}

// TestPINFileChecked: a PIN file others may read is refused before the
// token is asked, so no login is tried with it.
func TestPINFileChecked(t *testing.T) {
	st := pkcs11test.New(t)
	cfg := st.Config()
	pinFile := filepath.Join(t.TempDir(), "pin")
	if err := os.WriteFile(pinFile, []byte(st.PIN+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chmod(pinFile, 0o644)
	cfg.Secret = signer.SecretFile(pinFile)
	if tok, err := pkcs11.OpenStore(context.Background(), cfg); !errors.Is(err, signer.ErrPermissionDenied) {
		if tok != nil {
			tok.Close()
		}
		t.Errorf("OpenStore with a 0644 PIN file: %v, want ErrPermissionDenied", err)
	}
	os.Chmod(pinFile, 0o600)
	tok, err := pkcs11.OpenStore(context.Background(), cfg)
	if err != nil {
		t.Fatalf("OpenStore with a 0600 PIN file: %v", err)
	}
	tok.Close()
}
