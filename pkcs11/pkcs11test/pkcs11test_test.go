package pkcs11test_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/signerkit/signerkit/pkcs11"
	"github.com/signerkit/signerkit/pkcs11/pkcs11test"
	"github.com/signerkit/signerkit/signer"
)

// TestToken opens a key of a New token through its Config and through its
// URI, and checks the signatures with crypto/ed25519.
func TestToken(t *testing.T) {
	tok := pkcs11test.New(t)
	ctx := context.Background()
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	if err := tok.ImportPKCS8(priv, "imported", []byte{0x0a, 0x01}); err != nil {
		t.Fatal(err)
	}
	cfg := tok.Config()
	cfg.Key = signer.KeyRef{ID: "0a01"}
	k, err := pkcs11.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("pkcs11.Open(Config with Key): %v", err)
	}
	s, err := signer.Open(ctx, tok.URI("imported"))
	if err != nil {
		k.Close()
		t.Fatalf("signer.Open(%s): %v", tok.URI("imported"), err)
	}
	msg := []byte("a vote")
	for _, sg := range []signer.Signer{k, s} {
		sig, err := sg.SignContext(ctx, msg)
		if err != nil {
			t.Error(err)
		} else if !ed25519.Verify(priv.Public().(ed25519.PublicKey), msg, sig) {
			t.Error("the signature does not verify with the imported key")
		}
		sg.Close()
	}
	got, err := pkcs11.ParseURI(tok.URI("imported"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Module != tok.Module || got.TokenLabel != tok.Label || got.Key != (signer.KeyRef{Label: "imported"}) || got.Secret == nil {
		t.Fatalf("URI %q describes %+v", tok.URI("imported"), got)
	}
	if pin, err := got.Secret(); err != nil || string(pin) != tok.PIN {
		t.Errorf("URI %q gives the PIN %q, %v; want %q", tok.URI("imported"), pin, err, tok.PIN)
	}
	if strings.Contains(tok.URI(""), "object=") {
		t.Errorf("URI(\"\") = %q names a key", tok.URI(""))
	}
}

// TestRawSign signs through bare sessions with each kind of key and checks
// the signatures with the standard library.
func TestRawSign(t *testing.T) {
	tok := pkcs11test.New(t)
	_, edPriv, _ := ed25519.GenerateKey(rand.Reader)
	ecPriv, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	rsaPriv, _ := rsa.GenerateKey(rand.Reader, 2048)
	msg := []byte("signed by a bare session")
	digest := sha256.Sum256(msg)
	// The DigestInfo of a SHA-256 digest (RFC 8017 §9.2, note 1).
	digestInfo := append([]byte{0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20}, digest[:]...)
	for _, c := range []struct {
		label  string
		priv   crypto.Signer
		data   []byte
		verify func(sig []byte) bool
	}{
		{"ed25519", edPriv, msg, func(sig []byte) bool {
			return ed25519.Verify(edPriv.Public().(ed25519.PublicKey), msg, sig)
		}},
		{"p256", ecPriv, digest[:], func(sig []byte) bool {
			if len(sig) != 64 {
				return false
			}
			r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
			return ecdsa.Verify(&ecPriv.PublicKey, digest[:], r, s)
		}},
		{"rsa", rsaPriv, digestInfo, func(sig []byte) bool {
			return rsa.VerifyPKCS1v15(&rsaPriv.PublicKey, crypto.SHA256, digest[:], sig) == nil
		}},
	} {
		if err := tok.ImportPKCS8(c.priv, c.label, []byte(c.label)); err != nil {
			t.Fatal(err)
		}
		r, err := tok.OpenRaw(c.label)
		if err != nil {
			t.Fatalf("OpenRaw(%s): %v", c.label, err)
		}
		sig, err := r.Sign(c.data)
		r.Close()
		if err != nil {
			t.Errorf("%s: Sign: %v", c.label, err)
		} else if !c.verify(sig) {
			t.Errorf("%s: the signature does not verify", c.label)
		}
	}
	if r, err := tok.OpenRaw("absent"); err == nil {
		r.Close()
		t.Error("OpenRaw of a key the token does not have succeeded")
	}
}

// TestRealToken checks how RealToken reads its environment.
func TestRealToken(t *testing.T) {
	t.Setenv(pkcs11test.EnvURI, "")
	t.Setenv(pkcs11test.EnvModule, "")
	t.Setenv(pkcs11test.EnvPIN, "")
	if _, ok, err := pkcs11test.RealToken(); ok || err != nil {
		t.Errorf("with %s empty: ok %v, %v; want not ok", pkcs11test.EnvURI, ok, err)
	}
	for uri, want := range map[string]string{
		"pkcs11:token=t;object=k":                    pkcs11test.EnvModule, // no module anywhere
		"pkcs11:token=t?module-path=/m.so":           "names no key",
		"pkcs11:token=t;object=k;object=j":           "object",
		"pkcs11:token=t;object=k?module-name=a/b.so": "module-name",
	} {
		t.Setenv(pkcs11test.EnvURI, uri)
		if _, ok, err := pkcs11test.RealToken(); !ok || err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s=%s: ok %v, %v; want an error saying %s", pkcs11test.EnvURI, uri, ok, err, want)
		}
	}
	t.Setenv(pkcs11test.EnvURI, "pkcs11:token=t;id=%0a%01")
	t.Setenv(pkcs11test.EnvModule, "/usr/lib/pkcs11/vendor.so")
	t.Setenv(pkcs11test.EnvPIN, "0001password")
	cfg, ok, err := pkcs11test.RealToken()
	if !ok || err != nil {
		t.Fatalf("a full environment: ok %v, %v", ok, err)
	}
	if cfg.Module != "/usr/lib/pkcs11/vendor.so" || cfg.TokenLabel != "t" || cfg.Key != (signer.KeyRef{ID: "0a01"}) || cfg.Secret == nil {
		t.Fatalf("RealToken gave %+v", cfg)
	}
	if pin, err := cfg.Secret(); err != nil || string(pin) != "0001password" {
		t.Errorf("PIN %q, %v; want the one in %s", pin, err, pkcs11test.EnvPIN)
	}
	// The URI's own PIN wins.
	t.Setenv(pkcs11test.EnvURI, "pkcs11:token=t;id=%0a%01?pin-value=1234")
	if cfg, _, err := pkcs11test.RealToken(); err != nil {
		t.Fatal(err)
	} else if pin, _ := cfg.Secret(); string(pin) != "1234" {
		t.Errorf("PIN %q, want the URI's", pin)
	}
	var ue *signer.URIError
	t.Setenv(pkcs11test.EnvURI, "pkcs11:slot-id=x")
	if _, _, err := pkcs11test.RealToken(); !errors.As(err, &ue) || ue.Attr != "slot-id" {
		t.Errorf("a bad URI: %v, want a *signer.URIError naming slot-id", err)
	}
}
