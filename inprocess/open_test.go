package inprocess_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

// writeKey writes a new Ed25519 key to a key file in a fresh directory
// and returns its path and public key.
func writeKey(t *testing.T, name string) (string, ed25519.PublicKey) {
	t.Helper()
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	path := filepath.Join(t.TempDir(), name)
	if err := inprocess.WriteKeyFile(path, priv); err != nil {
		t.Fatal(err)
	}
	return path, pub
}

func TestOpenConformance(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, file := range []string{"ed25519-pkcs8.pem", "secp256k1-sec1.pem", "p384-sec1.pem", "cometbft-ed25519.json"} {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			cfg := inprocess.Config{File: filepath.Join(keyfiles, file)}
			signertest.Run(t, func() (signer.Signer, error) { return inprocess.Open(ctx, cfg) }, signertest.Options{})
		})
	}
}

func TestOpenRefuses(t *testing.T) {
	ctx := context.Background()
	path, _ := writeKey(t, "k.pem")
	done, cancel := context.WithCancel(ctx)
	cancel()
	cases := []struct {
		name string
		ctx  context.Context
		cfg  inprocess.Config
		want error
	}{
		{"zero Config", ctx, inprocess.Config{}, signer.ErrInvalidArgument},
		{"missing file", ctx, inprocess.Config{File: path + ".absent"}, signer.ErrKeyNotFound},
		{"Ed25519 key as P-256", ctx, inprocess.Config{File: path, Key: signer.KeyRef{Algorithm: signer.ECDSAP256}}, signer.ErrUnsupported},
		{"ECDSA key as RSA", ctx, inprocess.Config{File: filepath.Join(keyfiles, "p256-pkcs8.pem"), Key: signer.KeyRef{Algorithm: signer.RSAPSS}}, signer.ErrUnsupported},
		{"cancelled context", done, inprocess.Config{File: path}, context.Canceled},
	}
	for _, tc := range cases {
		k, err := inprocess.Open(tc.ctx, tc.cfg)
		if !errors.Is(err, tc.want) || k != nil {
			t.Errorf("%s: got %v, %v; want %v", tc.name, k, err, tc.want)
		} else if strings.Count(err.Error(), "inprocess:") != 1 {
			t.Errorf("%s: %q: want the package named once", tc.name, err)
		}
	}
}

func TestOpenStoreWithFile(t *testing.T) {
	ctx := context.Background()
	path, pub := writeKey(t, "validator.pem")
	store, err := inprocess.OpenStore(ctx, inprocess.Config{File: path})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	keys, err := store.ListKeys(ctx)
	if err != nil || len(keys) != 1 {
		t.Fatalf("ListKeys: %v, %v", keys, err)
	}
	if k := keys[0]; k.Label != "validator.pem" || k.ID != "0001" || k.Algorithm != signer.Ed25519 || !pub.Equal(k.Public) {
		t.Errorf("the file's key listed as %+v", k)
	}
	s, err := store.OpenKey(ctx, signer.KeyRef{Label: "validator.pem"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, ok := s.(*inprocess.Signer); !ok {
		t.Errorf("OpenKey returns a %T", s)
	}
	sig, err := s.SignContext(ctx, []byte("vote"))
	if err != nil {
		t.Fatal(err)
	}
	if !ed25519.Verify(pub, []byte("vote"), sig) {
		t.Error("signature does not verify")
	}
	// The store is a store like any other.
	signertest.RunKeyStore(t, store, signertest.KeyStoreOptions{Algorithms: []signer.Algorithm{signer.Ed25519, signer.ECDSASecp256k1}})

	// An RSA file's key, opened for PSS through Config.Key.Algorithm.
	rsaStore, err := inprocess.OpenStore(ctx, inprocess.Config{File: filepath.Join(keyfiles, "rsa2048-pkcs8.pem"), Key: signer.KeyRef{Algorithm: signer.RSAPSS}})
	if err != nil {
		t.Fatal(err)
	}
	defer rsaStore.Close()
	if keys, _ := rsaStore.ListKeys(ctx); len(keys) != 1 || keys[0].Algorithm != signer.RSAPSS {
		t.Errorf("RSA key listed as %+v, want rsa-pss", keys)
	}

	empty, err := inprocess.OpenStore(ctx, inprocess.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if keys, err := empty.ListKeys(ctx); err != nil || len(keys) != 0 {
		t.Errorf("a store without a file lists %v, %v", keys, err)
	}
	if _, err := inprocess.OpenStore(ctx, inprocess.Config{File: path + ".absent"}); !errors.Is(err, signer.ErrKeyNotFound) {
		t.Errorf("OpenStore of a missing file: %v", err)
	}
}

func TestParseURI(t *testing.T) {
	good := []struct {
		uri  string
		want inprocess.Config
	}{
		{"inprocess:file=/etc/keys/validator.pem", inprocess.Config{File: "/etc/keys/validator.pem"}},
		{"INPROCESS:file=keys/a%3Bb%25.pem", inprocess.Config{File: "keys/a;b%.pem"}},
		{"inprocess:file=/k.pem;algorithm=rsa-pss", inprocess.Config{File: "/k.pem", Key: signer.KeyRef{Algorithm: signer.RSAPSS}}},
		{"inprocess:algorithm=secp256k1;file=C:\\keys\\k.json", inprocess.Config{File: `C:\keys\k.json`, Key: signer.KeyRef{Algorithm: signer.ECDSASecp256k1}}},
	}
	for _, tc := range good {
		cfg, err := inprocess.ParseURI(tc.uri)
		if err != nil || cfg != tc.want {
			t.Errorf("ParseURI(%q) = %+v, %v; want %+v", tc.uri, cfg, err, tc.want)
		}
	}
	bad := []struct {
		uri, attr string
	}{
		{"inprocess:", "file"},
		{"inprocess:file=", "file"},
		{"inprocess:algorithm=ed25519", "file"},
		{"inprocess:file=/k.pem;algorithm=rsa", "algorithm"},
		{"inprocess:file=/k.pem;label=validator", "label"},
		{"inprocess:file=/k.pem?algorithm=ed25519", "algorithm"},
		{"inprocess:file=/k.pem?pin-source=env:PASS", "pin-source"},
		{"inprocess:file=/k.pem?pin-value=hunter2hunter2", "pin-value"},
		{"inprocess:file=/k.pem;file=/other.pem", "file"},
		{"inprocess:file=%zz", "file"},
		{"keybase:dir=/k;label=v", ""},
		{"/etc/keys/validator.pem", ""},
	}
	for _, tc := range bad {
		_, err := inprocess.ParseURI(tc.uri)
		var ue *signer.URIError
		if !errors.As(err, &ue) || ue.Attr != tc.attr || !errors.Is(err, signer.ErrInvalidArgument) {
			t.Errorf("ParseURI(%q): got %v, want a URIError naming attribute %q", tc.uri, err, tc.attr)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("ParseURI(%q): the error quotes the PIN: %v", tc.uri, err)
		}
	}
}

// signer.Open opens key files through the scheme this package registers,
// and returns a nil Signer with its errors.
func TestSignerOpenURI(t *testing.T) {
	ctx := context.Background()
	path, pub := writeKey(t, "validator key;1.pem")
	uri := (&signer.URI{Scheme: "inprocess", Path: []signer.URIAttr{{Name: "file", Value: path}}}).String()
	s, err := signer.Open(ctx, uri)
	if err != nil {
		t.Fatalf("signer.Open(%q): %v", uri, err)
	}
	defer s.Close()
	msg := []byte("precommit")
	sig, err := s.SignContext(ctx, msg)
	if err != nil {
		t.Fatal(err)
	}
	if !ed25519.Verify(pub, msg, sig) {
		t.Error("signature does not verify")
	}

	// secp256k1 from a SEC 1 file, with the algorithm named.
	k1, err := signer.OpenSecret(ctx, "inprocess:file="+filepath.Join(keyfiles, "secp256k1-sec1.pem")+";algorithm=secp256k1", signer.SecretBytes([]byte("unused")))
	if err != nil {
		t.Fatal(err)
	}
	defer k1.Close()
	sig, err = k1.SignContext(ctx, msg)
	if err != nil {
		t.Fatal(err)
	}
	if err := signertest.VerifyStd(signer.ECDSASecp256k1, k1.Public().(*ecdsa.PublicKey), msg, sig); err != nil {
		t.Error(err)
	}

	for uri, want := range map[string]error{
		uri + ".absent":         signer.ErrKeyNotFound,
		uri + "?pin-value=x":    signer.ErrInvalidArgument,
		uri + ";algorithm=p256": signer.ErrUnsupported,
	} {
		s, err := signer.Open(ctx, uri)
		if !errors.Is(err, want) || s != nil {
			t.Errorf("signer.Open(%q) = %v, %v; want a nil Signer and %v", uri, s, err, want)
		}
	}
}
