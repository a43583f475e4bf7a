//go:build cgo

package pkcs11_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signerkit/signerkit/pkcs11"
	"github.com/signerkit/signerkit/pkcs11/pkcs11test"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

// openToken makes a throwaway SoftHSM2 token and opens it; both go away
// when the test ends.
func openToken(t testing.TB, mutate ...func(*pkcs11.Config)) (*pkcs11test.Token, *pkcs11.Token) {
	t.Helper()
	st := pkcs11test.New(t)
	cfg := st.Config()
	for _, m := range mutate {
		m(&cfg)
	}
	tok, err := pkcs11.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { tok.Close() })
	return st, tok
}

// generateKey makes an alg key labelled label on tok and opens it; the Key
// closes when the test ends.
func generateKey(t testing.TB, tok *pkcs11.Token, alg signer.Algorithm, label string) *pkcs11.Key {
	t.Helper()
	ki, err := tok.GenerateKey(context.Background(), alg, label)
	if err != nil {
		t.Fatalf("GenerateKey: %v", err)
	}
	k, err := tok.Key(context.Background(), ki.Ref())
	if err != nil {
		t.Fatalf("Key: %v", err)
	}
	t.Cleanup(func() { k.Close() })
	return k
}

func TestConformance(t *testing.T) {
	for _, alg := range []signer.Algorithm{signer.Ed25519, signer.ECDSAP256, signer.RSAPKCS1v15, signer.ECDSAP384, signer.RSAPSS} {
		t.Run(alg.String(), func(t *testing.T) {
			_, tok := openToken(t)
			ki, err := tok.GenerateKey(context.Background(), alg, "conformance")
			if err != nil {
				t.Fatalf("GenerateKey: %v", err)
			}
			signertest.Run(t, func() (signer.Signer, error) {
				return tok.OpenKey(context.Background(), ki.Ref())
			}, signertest.Options{})
		})
	}
}

func TestKeyStore(t *testing.T) {
	_, tok := openToken(t)
	signertest.RunKeyStore(t, tok, signertest.KeyStoreOptions{})
	keys, err := tok.ListKeys(context.Background())
	if err != nil || len(keys) != 0 {
		t.Errorf("after the key store suite: ListKeys = %v, %v; want no keys left", keys, err)
	}
}

func TestKeyStoreRefusals(t *testing.T) {
	ctx := context.Background()
	st, tok := openToken(t)
	if _, err := tok.GenerateKey(ctx, signer.ECDSASecp256k1, "k1"); !errors.Is(err, signer.ErrUnsupported) {
		t.Errorf("GenerateKey(secp256k1): %v, want ErrUnsupported", err)
	}
	if _, err := tok.Generate(ctx, pkcs11.KeySpec{Algorithm: signer.RSAPSS, Label: "small", RSABits: 1024}); !errors.Is(err, signer.ErrUnsupported) {
		t.Errorf("Generate(RSA-1024): %v, want ErrUnsupported", err)
	}
	if _, err := tok.GenerateKey(ctx, signer.Ed25519, ""); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("GenerateKey with no label: %v, want ErrInvalidArgument", err)
	}
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	if _, err := tok.ImportKey(ctx, small, signer.RSAPKCS1v15, "small"); !errors.Is(err, signer.ErrUnsupported) {
		t.Errorf("ImportKey(RSA-1024): %v, want ErrUnsupported", err)
	}
	if _, err := tok.OpenKey(ctx, signer.KeyRef{ID: "zz"}); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("OpenKey with a non-hex id: %v, want ErrInvalidArgument", err)
	}
	if _, err := tok.OpenKey(ctx, signer.KeyRef{}); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("OpenKey with no label or id: %v, want ErrInvalidArgument", err)
	}
	// Two keys under one label (other tools allow it): the label alone is
	// ambiguous, the id is not.
	a, err := tok.Generate(ctx, pkcs11.KeySpec{Algorithm: signer.ECDSAP256, Label: "twin", ID: []byte{1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tok.Generate(ctx, pkcs11.KeySpec{Algorithm: signer.ECDSAP256, Label: "twin", ID: []byte{2}}); !errors.Is(err, signer.ErrKeyExists) {
		t.Fatalf("second key under a label: %v, want ErrKeyExists", err)
	}
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err := st.ImportPKCS8(other, "twin", []byte{2}); err != nil {
		t.Fatal(err)
	}
	if k, err := tok.OpenKey(ctx, signer.KeyRef{Label: "twin"}); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("OpenKey of a label two keys have: %v, %v; want ErrInvalidArgument", k, err)
	}
	for _, id := range []string{"01", "02"} {
		k, err := tok.Key(ctx, signer.KeyRef{Label: "twin", ID: id})
		if err != nil {
			t.Fatalf("Key(twin, %s): %v", id, err)
		}
		if (id == "02") != other.PublicKey.Equal(k.Public()) {
			t.Errorf("Key(twin, %s) opened the other key", id)
		}
		signAndVerify(t, k)
		k.Close()
	}
	if k, err := tok.Key(ctx, signer.KeyRef{ID: a.ID, Algorithm: signer.Ed25519}); !errors.Is(err, signer.ErrUnsupported) {
		t.Errorf("opening a P-256 key as Ed25519: %v, %v; want ErrUnsupported", k, err)
	}
}

// TestForeignKeys opens keys that other tools put on the token:
// softhsm2-util --import of PKCS #8 files, and OpenSC's pkcs11-tool
// --keypairgen, which writes Ed25519's CKA_EC_PARAMS as the printable
// string "edwards25519".
func TestForeignKeys(t *testing.T) {
	st, tok := openToken(t)
	ctx := context.Background()
	_, edPriv, _ := ed25519.GenerateKey(rand.Reader)
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	imports := []struct {
		label string
		id    []byte
		priv  crypto.Signer
		alg   signer.Algorithm
	}{
		{"imported-ed25519", []byte{0xed, 1}, edPriv, signer.Ed25519},
		{"imported-p256", []byte{0x25, 6}, p256, signer.ECDSAP256},
		{"imported-p384", []byte{0x38, 4}, p384, signer.ECDSAP384},
		{"imported-rsa", []byte{0x20, 0x48}, rsaKey, signer.RSAPKCS1v15},
	}
	for _, im := range imports {
		if err := st.ImportPKCS8(im.priv, im.label, im.id); err != nil {
			t.Fatalf("softhsm2-util --import %s: %v", im.label, err)
		}
		for _, ref := range []signer.KeyRef{{Label: im.label}, {ID: hex.EncodeToString(im.id)}} {
			k, err := tok.Key(ctx, ref)
			if err != nil {
				t.Errorf("Key(%v): %v", ref, err)
				continue
			}
			if k.Algorithm() != im.alg || !im.priv.Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(k.Public()) {
				t.Errorf("Key(%v): %v key %T, want the imported %v key", ref, k.Algorithm(), k.Public(), im.alg)
			}
			signAndVerify(t, k)
			k.Close()
		}
	}

	if _, err := st.Tool("--version"); errors.Is(err, exec.ErrNotFound) {
		t.Log("pkcs11-tool (OpenSC) is not installed: keys it makes are not tested")
		return
	}
	tools := []struct {
		keyType, label, id string
		alg                signer.Algorithm
	}{
		{"EC:edwards25519", "tool-ed25519", "e1", signer.Ed25519},
		{"EC:prime256v1", "tool-p256", "e2", signer.ECDSAP256},
		{"rsa:2048", "tool-rsa", "e3", signer.RSAPKCS1v15},
	}
	for _, tk := range tools {
		if out, err := st.Tool("--keypairgen", "--key-type", tk.keyType, "--label", tk.label, "--id", tk.id); err != nil {
			t.Fatalf("pkcs11-tool --keypairgen %s: %v\n%s", tk.keyType, err, out)
		}
		k, err := tok.Key(ctx, signer.KeyRef{Label: tk.label, ID: tk.id})
		if err != nil {
			t.Errorf("Key(%s): %v", tk.label, err)
			continue
		}
		if k.Algorithm() != tk.alg {
			t.Errorf("Key(%s): %v, want %v", tk.label, k.Algorithm(), tk.alg)
		}
		signAndVerify(t, k)
		k.Close()
	}
	// A key this package cannot use is left out of the list and refused.
	if out, err := st.Tool("--keypairgen", "--key-type", "EC:secp256k1", "--label", "tool-k1", "--id", "e4"); err != nil {
		t.Fatalf("pkcs11-tool --keypairgen EC:secp256k1: %v\n%s", err, out)
	}
	if k, err := tok.Key(ctx, signer.KeyRef{Label: "tool-k1"}); !errors.Is(err, signer.ErrUnsupported) {
		t.Errorf("a secp256k1 key: %v, %v; want ErrUnsupported", k, err)
	}
	keys, err := tok.ListKeys(ctx)
	if err != nil || len(keys) != len(imports)+len(tools) {
		t.Errorf("ListKeys: %d keys, %v; want %d", len(keys), err, len(imports)+len(tools))
	}
}

// signAndVerify signs a message through SignContext and crypto.Signer and
// checks both signatures with the standard library.
func signAndVerify(t *testing.T, k *pkcs11.Key) {
	t.Helper()
	msg := []byte("signerkit pkcs11 test message")
	sig, err := k.SignContext(context.Background(), msg)
	if err != nil {
		t.Errorf("%s: SignContext: %v", k.Info().Label, err)
		return
	}
	if err := signertest.VerifyStd(k.Algorithm(), k.Public(), msg, sig); err != nil {
		t.Errorf("%s: %v", k.Info().Label, err)
	}
	var digest []byte = msg
	if h := k.Algorithm().Hash(); h != 0 {
		digest = k.Algorithm().Digest(msg)
	}
	der, err := k.Sign(rand.Reader, digest, k.Algorithm().SignerOpts())
	if err != nil {
		t.Errorf("%s: Sign: %v", k.Info().Label, err)
		return
	}
	if k.Algorithm().IsECDSA() {
		if !ecdsa.VerifyASN1(k.Public().(*ecdsa.PublicKey), digest, der) {
			t.Errorf("%s: crypto.Signer ECDSA signature does not verify", k.Info().Label)
		}
		return
	}
	if err := signertest.VerifyStd(k.Algorithm(), k.Public(), msg, der); err != nil {
		t.Errorf("%s: crypto.Signer: %v", k.Info().Label, err)
	}
}

// TestRSA4096 imports a 4096-bit key (pkcs11test.RSA4096: generating one
// takes seconds, at random) and signs with both schemes.
func TestRSA4096(t *testing.T) {
	priv, err := pkcs11test.RSA4096()
	if err != nil {
		t.Fatal(err)
	}
	_, tok := openToken(t)
	ctx := context.Background()
	ki, err := tok.ImportKey(ctx, priv, signer.RSAPSS, "rsa4096")
	if err != nil {
		t.Fatal(err)
	}
	if n := ki.Public.(*rsa.PublicKey).N.BitLen(); n != 4096 || ki.Algorithm != signer.RSAPSS {
		t.Fatalf("a %d-bit %v key", n, ki.Algorithm)
	}
	for _, alg := range []signer.Algorithm{signer.RSAPSS, signer.RSAPKCS1v15} {
		ref := ki.Ref()
		ref.Algorithm = alg
		k, err := tok.Key(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		signAndVerify(t, k)
		k.Close()
	}
}

// TestNoPIN opens a token without a PIN: a public session sees no private
// keys, and says why.
func TestNoPIN(t *testing.T) {
	st, tok := openToken(t)
	ctx := context.Background()
	ki, err := tok.GenerateKey(ctx, signer.Ed25519, "hidden")
	if err != nil {
		t.Fatal(err)
	}
	tok.Close()
	cfg := st.Config()
	cfg.PIN = nil
	public, err := pkcs11.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("Open without a PIN: %v", err)
	}
	defer public.Close()
	_, err = public.Key(ctx, ki.Ref())
	if !errors.Is(err, signer.ErrKeyNotFound) || !strings.Contains(err.Error(), "no PIN") {
		t.Errorf("a private key without a login: %v, want ErrKeyNotFound saying no PIN was given", err)
	}
	if _, err := public.GenerateKey(ctx, signer.Ed25519, "public"); !errors.Is(err, signer.ErrPermissionDenied) {
		t.Errorf("GenerateKey without a login: %v, want ErrPermissionDenied", err)
	}
}

// TestOpenURI opens keys by RFC 7512 URIs: with pin-value, with pin-source,
// by id and slot-id, and with the PIN from a callback instead.
func TestOpenURI(t *testing.T) {
	st, tok := openToken(t)
	ctx := context.Background()
	ki, err := tok.GenerateKey(ctx, signer.ECDSAP384, "by uri; with a ?")
	if err != nil {
		t.Fatal(err)
	}
	pinFile := filepath.Join(t.TempDir(), "pin")
	if err := os.WriteFile(pinFile, []byte(st.PIN+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	id, _ := hex.DecodeString(ki.ID)
	byID := pkcs11.URI{Token: st.Label, ID: id, ModulePath: st.Module, PINSource: "file:" + pinFile}
	bySlot := pkcs11.URI{SlotID: func() *uint { s := tok.SlotID(); return &s }(), Object: ki.Label, Type: "private", ModulePath: st.Module}
	for _, c := range []struct {
		uri string
		pin pkcs11.PINFunc
	}{
		{st.URI(ki.Label), nil},
		{byID.String(), nil},
		{bySlot.String(), st.Config().PIN},
	} {
		k, err := pkcs11.OpenURI(ctx, c.uri, c.pin)
		if err != nil {
			t.Errorf("OpenURI(%s): %v", c.uri, err)
			continue
		}
		if !ki.Public.(*ecdsa.PublicKey).Equal(k.Public()) {
			t.Errorf("OpenURI(%s) opened another key", c.uri)
		}
		signAndVerify(t, k)
		k.Close()
	}
	for uri, want := range map[string]error{
		"pkcs11:token=absent;object=x?module-path=" + st.Module + "&pin-value=" + st.PIN:  signer.ErrDeviceNotFound,
		"pkcs11:object=x?module-path=/nonexistent/libpkcs11.so":                           signer.ErrDeviceNotFound,
		"pkcs11:object=x?module-path=" + pinFile:                                          signer.ErrDeviceNotFound, // not a library
		st.URI("absent"):                                                                  signer.ErrKeyNotFound,
		"pkcs11:token=" + st.Label + "?module-path=" + st.Module + "&pin-value=" + st.PIN: signer.ErrInvalidArgument, // no key named
	} {
		if k, err := pkcs11.OpenURI(ctx, uri, nil); !errors.Is(err, want) {
			t.Errorf("OpenURI(%s): %v, %v; want %v", uri, k, err, want)
		}
	}
}
