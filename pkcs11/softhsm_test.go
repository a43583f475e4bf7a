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
	"crypto/x509"
	_ "embed"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
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
func openToken(t testing.TB, mutate ...func(*pkcs11.Config)) (*pkcs11test.Token, *pkcs11.Store) {
	t.Helper()
	st := pkcs11test.New(t)
	cfg := st.Config()
	for _, m := range mutate {
		m(&cfg)
	}
	tok, err := pkcs11.OpenStore(context.Background(), cfg)
	if err != nil {
		t.Fatalf("OpenStore: %v", err)
	}
	t.Cleanup(func() { tok.Close() })
	return st, tok
}

// openKey opens the key ref names through tok.OpenKey, whose Signer must
// be a *pkcs11.Signer, and a nil interface with every error.
func openKey(ctx context.Context, tok *pkcs11.Store, ref signer.KeyRef) (*pkcs11.Signer, error) {
	s, err := tok.OpenKey(ctx, ref)
	if err != nil {
		if s != nil {
			return nil, fmt.Errorf("OpenKey(%v) returned a non-nil %T with its error %w", ref, s, err)
		}
		return nil, err
	}
	k, ok := s.(*pkcs11.Signer)
	if !ok {
		s.Close()
		return nil, fmt.Errorf("OpenKey(%v) returned a %T, want a *pkcs11.Signer", ref, s)
	}
	return k, nil
}

// generateKey makes an alg key labelled label on tok and opens it; the
// Signer closes when the test ends.
func generateKey(t testing.TB, tok *pkcs11.Store, alg signer.Algorithm, label string) *pkcs11.Signer {
	t.Helper()
	ki, err := tok.GenerateKey(context.Background(), alg, label)
	if err != nil {
		t.Fatalf("GenerateKey: %v", err)
	}
	k, err := openKey(context.Background(), tok, ki.Ref())
	if err != nil {
		t.Fatalf("OpenKey: %v", err)
	}
	t.Cleanup(func() { k.Close() })
	return k
}

// newKey makes an alg key labelled label on tok: generated on the token
// for Ed25519 and ECDSA; for RSA, the fixed key of testdata/rsa2048.pem
// imported for alg. The tests whose subject is not key generation take
// it rather than have SoftHSM2 generate an RSA key, which costs about half
// a second of CPU.
func newKey(t testing.TB, tok *pkcs11.Store, alg signer.Algorithm, label string) signer.KeyInfo {
	t.Helper()
	if !alg.IsRSA() {
		ki, err := tok.GenerateKey(context.Background(), alg, label)
		if err != nil {
			t.Fatalf("GenerateKey: %v", err)
		}
		return ki
	}
	ki, err := tok.ImportKey(context.Background(), rsa2048(t), alg, label)
	if err != nil {
		t.Fatalf("ImportKey: %v", err)
	}
	return ki
}

// makeKey makes a key as newKey does and opens it; the Signer closes when
// the test ends.
func makeKey(t testing.TB, tok *pkcs11.Store, alg signer.Algorithm, label string) *pkcs11.Signer {
	t.Helper()
	ki := newKey(t, tok, alg, label)
	k, err := openKey(context.Background(), tok, ki.Ref())
	if err != nil {
		t.Fatalf("OpenKey: %v", err)
	}
	t.Cleanup(func() { k.Close() })
	return k
}

// TestConformance runs the conformance suite on a key of each algorithm
// generated on a token of its own. (Sharing one token, with the next key
// generated while the suite ran on the one before, saved a second but
// made C_GenerateKeyPair answer CKR_GENERAL_ERROR now and then.)
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
		k, err := openKey(ctx, tok, signer.KeyRef{Label: "twin", ID: id})
		if err != nil {
			t.Fatalf("OpenKey(twin, %s): %v", id, err)
		}
		if (id == "02") != other.PublicKey.Equal(k.Public()) {
			t.Errorf("OpenKey(twin, %s) opened the other key", id)
		}
		signAndVerify(t, k)
		k.Close()
	}
	if k, err := openKey(ctx, tok, signer.KeyRef{ID: a.ID, Algorithm: signer.Ed25519}); !errors.Is(err, signer.ErrUnsupported) {
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
	rsaKey := rsa2048(t)
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
			k, err := openKey(ctx, tok, ref)
			if err != nil {
				t.Errorf("OpenKey(%v): %v", ref, err)
				continue
			}
			if k.Algorithm() != im.alg || !im.priv.Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(k.Public()) {
				t.Errorf("OpenKey(%v): %v key %T, want the imported %v key", ref, k.Algorithm(), k.Public(), im.alg)
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
		k, err := openKey(ctx, tok, signer.KeyRef{Label: tk.label, ID: tk.id})
		if err != nil {
			t.Errorf("OpenKey(%s): %v", tk.label, err)
			continue
		}
		if k.Algorithm() != tk.alg {
			t.Errorf("OpenKey(%s): %v, want %v", tk.label, k.Algorithm(), tk.alg)
		}
		signAndVerify(t, k)
		k.Close()
	}
	// A key this package cannot use is left out of the list and refused.
	if out, err := st.Tool("--keypairgen", "--key-type", "EC:secp256k1", "--label", "tool-k1", "--id", "e4"); err != nil {
		t.Fatalf("pkcs11-tool --keypairgen EC:secp256k1: %v\n%s", err, out)
	}
	if k, err := openKey(ctx, tok, signer.KeyRef{Label: "tool-k1"}); !errors.Is(err, signer.ErrUnsupported) {
		t.Errorf("a secp256k1 key: %v, %v; want ErrUnsupported", k, err)
	}
	keys, err := tok.ListKeys(ctx)
	if err != nil || len(keys) != len(imports)+len(tools) {
		t.Errorf("ListKeys: %d keys, %v; want %d", len(keys), err, len(imports)+len(tools))
	}
}

// signAndVerify signs a message through SignContext and crypto.Signer and
// checks both signatures with the standard library.
func signAndVerify(t *testing.T, k *pkcs11.Signer) {
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

// rsa4096PEM is a fixed 4096-bit RSA key in PKCS #8: generating one takes
// seconds, a random number of them. It is public: never use it for
// anything but tests.
//
//go:embed testdata/rsa4096.pem
var rsa4096PEM []byte

// TestRSA4096 imports a 4096-bit key and signs with both schemes.
func TestRSA4096(t *testing.T) {
	block, _ := pem.Decode(rsa4096PEM)
	if block == nil {
		t.Fatal("testdata/rsa4096.pem is not PEM")
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	priv, ok := parsed.(*rsa.PrivateKey)
	if !ok {
		t.Fatalf("testdata/rsa4096.pem holds a %T", parsed)
	}
	_, tok := openToken(t)
	ctx := context.Background()
	ki, err := tok.ImportKey(ctx, priv, signer.RSAPSS, "rsa4096")
	if err != nil {
		t.Fatal(err)
	}
	if n := ki.Public.(*rsa.PublicKey).N.BitLen(); n != 4096 || ki.Algorithm != signer.RSAPSS || !priv.PublicKey.Equal(ki.Public) {
		t.Fatalf("imported a %d-bit %v key %v, want the 4096-bit RSA-PSS key", n, ki.Algorithm, ki.Public)
	}
	for _, alg := range []signer.Algorithm{signer.RSAPSS, signer.RSAPKCS1v15} {
		ref := ki.Ref()
		ref.Algorithm = alg
		k, err := openKey(ctx, tok, ref)
		if err != nil {
			t.Fatal(err)
		}
		if k.Algorithm() != alg {
			t.Errorf("opened as %v: signs %v", alg, k.Algorithm())
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
	cfg.Secret = nil
	public, err := pkcs11.OpenStore(ctx, cfg)
	if err != nil {
		t.Fatalf("OpenStore without a PIN: %v", err)
	}
	defer public.Close()
	_, err = openKey(ctx, public, ki.Ref())
	if !errors.Is(err, signer.ErrKeyNotFound) || !strings.Contains(err.Error(), "no PIN") {
		t.Errorf("a private key without a login: %v, want ErrKeyNotFound saying no PIN was given", err)
	}
	if _, err := public.GenerateKey(ctx, signer.Ed25519, "public"); !errors.Is(err, signer.ErrPermissionDenied) {
		t.Errorf("GenerateKey without a login: %v, want ErrPermissionDenied", err)
	}
}

// TestOpen opens a key with pkcs11.Open: the Signer holds the token and
// module it opened, and its Close releases them.
func TestOpen(t *testing.T) {
	st, tok := openToken(t)
	ctx := context.Background()
	ki, err := tok.GenerateKey(ctx, signer.Ed25519, "open")
	if err != nil {
		t.Fatal(err)
	}
	tok.Close()
	if mods := pkcs11.LoadedModules(); len(mods) != 0 {
		t.Fatalf("modules loaded after the Store closed: %v", mods)
	}
	cfg := st.Config()
	for _, ref := range []signer.KeyRef{{Label: "open"}, {ID: ki.ID}, {Label: "open", ID: ki.ID, Algorithm: signer.Ed25519}} {
		cfg.Key = ref
		k, err := pkcs11.Open(ctx, cfg)
		if err != nil {
			t.Fatalf("Open(%v): %v", ref, err)
		}
		if !ki.Public.(ed25519.PublicKey).Equal(k.Public()) || k.Info().ID != ki.ID || k.Info().Label != "open" {
			t.Errorf("Open(%v) opened %+v, want %+v", ref, k.Info(), ki)
		}
		signAndVerify(t, k)
		if mods := pkcs11.LoadedModules(); mods[st.Module] != 1 {
			t.Errorf("with the Signer open: %v loaded, want the module once", mods)
		}
		k.Close()
		if mods := pkcs11.LoadedModules(); len(mods) != 0 {
			t.Errorf("after the Signer closed: %v loaded, want none", mods)
		}
		if _, err := k.SignContext(ctx, []byte("closed")); !errors.Is(err, signer.ErrClosed) {
			t.Errorf("sign after Close: %v, want ErrClosed", err)
		}
	}
	for _, c := range []struct {
		ref  signer.KeyRef
		want error
	}{
		{signer.KeyRef{}, signer.ErrInvalidArgument},
		{signer.KeyRef{ID: "not hex"}, signer.ErrInvalidArgument},
		{signer.KeyRef{Label: "absent"}, signer.ErrKeyNotFound},
		{signer.KeyRef{Label: "open", Algorithm: signer.ECDSAP256}, signer.ErrUnsupported},
	} {
		cfg.Key = c.ref
		k, err := pkcs11.Open(ctx, cfg)
		if !errors.Is(err, c.want) || k != nil {
			t.Errorf("Open(%v): %v, %v; want nil and %v", c.ref, k, err, c.want)
		}
		if err != nil && strings.Count(err.Error(), "pkcs11:") != 1 {
			t.Errorf("Open(%v): %q, want the pkcs11: prefix once", c.ref, err)
		}
	}
	if mods := pkcs11.LoadedModules(); len(mods) != 0 {
		t.Errorf("after the refused opens: %v loaded, want none", mods)
	}
}

// TestSignerOpen opens keys through signer.Open and signer.OpenSecret
// with pkcs11: URIs: the PIN from pin-value, from a pin-source file, from
// pin-source=env:NAME and from the caller's Secret; the key by label, by id
// and by slot-id.
func TestSignerOpen(t *testing.T) {
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
	const pinEnv = "SIGNERKIT_TEST_PKCS11_PIN"
	t.Setenv(pinEnv, st.PIN)
	id, _ := hex.DecodeString(ki.ID)
	slot := tok.SlotID()
	byID := pkcs11.URI{Token: st.Label, ID: id, ModulePath: st.Module, PINSource: "file:" + pinFile}
	byEnv := pkcs11.URI{Token: st.Label, Object: ki.Label, ModulePath: st.Module, PINSource: "env:" + pinEnv}
	bySlot := pkcs11.URI{SlotID: &slot, Object: ki.Label, Type: "private", ModulePath: st.Module}
	for _, c := range []struct {
		uri    string
		secret signer.Secret
	}{
		{st.URI(ki.Label), nil},
		{byID.String(), nil},
		{byEnv.String(), nil},
		{bySlot.String(), signer.SecretBytes([]byte(st.PIN))},
		// The URI's pin-source wins over the caller's (wrong) PIN.
		{byEnv.String(), signer.SecretBytes([]byte("0000"))},
	} {
		s, err := signer.OpenSecret(ctx, c.uri, c.secret)
		if err != nil {
			t.Errorf("signer.OpenSecret(%s): %v", c.uri, err)
			continue
		}
		k, ok := s.(*pkcs11.Signer)
		if !ok {
			t.Errorf("signer.OpenSecret(%s) returned a %T, want a *pkcs11.Signer", c.uri, s)
			s.Close()
			continue
		}
		if !ki.Public.(*ecdsa.PublicKey).Equal(k.Public()) {
			t.Errorf("signer.OpenSecret(%s) opened another key", c.uri)
		}
		signAndVerify(t, k)
		s.Close()
	}
	tok.Close()
	if mods := pkcs11.LoadedModules(); len(mods) != 0 {
		t.Errorf("after closing what signer.Open opened: %v loaded, want none", mods)
	}

	for uri, want := range map[string]error{
		"pkcs11:token=absent;object=x?module-path=" + st.Module + "&pin-value=" + st.PIN:  signer.ErrDeviceNotFound,
		"pkcs11:object=x?module-path=/nonexistent/libpkcs11.so":                           signer.ErrDeviceNotFound,
		"pkcs11:object=x?module-path=" + pinFile:                                          signer.ErrDeviceNotFound,  // not a library
		"pkcs11:object=x":                                                                 signer.ErrInvalidArgument, // no module
		st.URI("absent"):                                                                  signer.ErrKeyNotFound,
		"pkcs11:token=" + st.Label + "?module-path=" + st.Module + "&pin-value=" + st.PIN: signer.ErrInvalidArgument, // no key named
		"pkcs11:object=x;slot-id=one?module-path=" + st.Module:                            signer.ErrInvalidArgument,
		byEnv.String() + "&pin-value=" + st.PIN:                                           signer.ErrInvalidArgument, // two PINs
		"pkcs11:object=x;vendor-x=1?module-path=" + st.Module:                             signer.ErrUnsupported,
	} {
		if s, err := signer.Open(ctx, uri); !errors.Is(err, want) || s != nil {
			t.Errorf("signer.Open(%s): %v, %v; want a nil Signer and %v", uri, s, err, want)
		}
	}
	if mods := pkcs11.LoadedModules(); len(mods) != 0 {
		t.Errorf("after the refused opens: %v loaded, want none", mods)
	}
}

// TestSignerOpenEnvPIN opens a key through signer.Open with the PIN in an
// environment variable that pin-source=env:NAME names, and checks its
// signature with crypto/ed25519; an unset variable and a wrong PIN in it
// are refused.
func TestSignerOpenEnvPIN(t *testing.T) {
	st, tok := openToken(t)
	ctx := context.Background()
	ki, err := tok.GenerateKey(ctx, signer.Ed25519, "validator")
	if err != nil {
		t.Fatal(err)
	}
	tok.Close()
	const pinEnv = "SIGNERKIT_TEST_TOKEN_PIN"
	uri := "pkcs11:token=" + st.Label + ";object=validator?module-path=" + st.Module + "&pin-source=env:" + pinEnv

	t.Setenv(pinEnv, st.PIN)
	s, err := signer.Open(ctx, uri)
	if err != nil {
		t.Fatalf("signer.Open(%s): %v", uri, err)
	}
	msg := []byte("a vote at height 7")
	sig, err := s.SignContext(ctx, msg)
	if err != nil {
		t.Fatal(err)
	}
	if !ed25519.Verify(ki.Public.(ed25519.PublicKey), msg, sig) {
		t.Error("the signature does not verify with the generated key")
	}
	if !ki.Public.(ed25519.PublicKey).Equal(s.Public()) {
		t.Error("signer.Open opened another key")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	t.Setenv(pinEnv, "0000")
	if s, err := signer.Open(ctx, uri); !errors.Is(err, signer.ErrWrongPassphrase) || s != nil {
		t.Errorf("a wrong PIN in $%s: %v, %v; want ErrWrongPassphrase", pinEnv, s, err)
	} else if strings.Contains(err.Error(), "0000") {
		t.Errorf("the error shows the PIN: %q", err)
	}
	os.Unsetenv(pinEnv) // t.Setenv restores it when the test ends
	if s, err := signer.Open(ctx, uri); !errors.Is(err, signer.ErrInvalidArgument) || s != nil || !strings.Contains(err.Error(), pinEnv) {
		t.Errorf("$%s unset: %v, %v; want ErrInvalidArgument naming the variable", pinEnv, s, err)
	}
	if mods := pkcs11.LoadedModules(); len(mods) != 0 {
		t.Errorf("after the opens: %v loaded, want none", mods)
	}
}
