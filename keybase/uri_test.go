package keybase_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signerkit/signerkit/keybase"
	"github.com/signerkit/signerkit/signer"
)

func TestParseURI(t *testing.T) {
	t.Setenv("KEYBASE_URI_PASS", "from the environment")
	good := []struct {
		uri    string
		dir    string
		label  string
		mode   keybase.Mode
		secret string // "" for none
	}{
		{"keybase:dir=/var/lib/gnokey;label=validator?pin-source=env:KEYBASE_URI_PASS", "/var/lib/gnokey", "validator", keybase.UnlockOnce, "from the environment"},
		{"keybase:label=v.1;dir=keys?mode=per-sign&pin-value=hunter%262", "keys", "v.1", keybase.PerSign, "hunter&2"},
		{"KEYBASE:dir=/a%3Bb%3Fc;label=v?mode=unlock-once", "/a;b?c", "v", keybase.UnlockOnce, ""},
		{`keybase:dir=C:\keys;label=v`, `C:\keys`, "v", keybase.UnlockOnce, ""},
	}
	for _, tc := range good {
		cfg, err := keybase.ParseURI(tc.uri)
		if err != nil {
			t.Errorf("ParseURI(%q): %v", tc.uri, err)
			continue
		}
		if cfg.Dir != tc.dir || cfg.Key != (signer.KeyRef{Label: tc.label}) || cfg.Mode != tc.mode || cfg.Cost != 0 || cfg.AllowUnencrypted {
			t.Errorf("ParseURI(%q) = %+v", tc.uri, cfg)
		}
		switch {
		case tc.secret == "" && cfg.Secret != nil:
			t.Errorf("ParseURI(%q): a Secret from nowhere", tc.uri)
		case tc.secret != "":
			if got, err := cfg.Secret(); err != nil || string(got) != tc.secret {
				t.Errorf("ParseURI(%q): secret %q, %v; want %q", tc.uri, got, err, tc.secret)
			}
		}
	}
	bad := []struct {
		uri, attr string
	}{
		{"keybase:label=v", "dir"},
		{"keybase:dir=;label=v", "dir"},
		{"keybase:dir=/k", "label"},
		{"keybase:dir=/k;label=", "label"},
		{"keybase:dir=/k;label=" + strings.Repeat("k", keybase.MaxName+1), "label"},
		{"keybase:dir=/k;label=v?mode=fast", "mode"},
		{"keybase:dir=/k;label=v;mode=per-sign", "mode"},
		{"keybase:dir=/k;label=v?cost=4", "cost"},
		{"keybase:dir=/k;label=v;id=0a01", "id"},
		{"keybase:dir=/k;label=v?label=w", "label"},
		{"keybase:dir=/k;label=v?pin-source=env:A&pin-value=s3cr3t-pin", "pin-value"},
		{"keybase:dir=/k;label=v?pin-source=ftp://host/pin", "pin-source"},
		{"keybase:dir=/k;label=v?pin-source=", "pin-source"},
		{"keybase:dir=/k;label=v?pin-value=s3cr3t-pin&bogus=1", "pin-value"},
		{"keybase:dir=/k;label=v?pin-value=s3cr3t-pin&mode=s3cr3t", "pin-value"},
		{"keybase:dir=/k;label=v?mode=s3cr3t&pin-value=s3cr3t-pin", "mode"},
		{"keybase:dir=/k;label=v;pin-value=s3cr3t-pin", "pin-value"},
		{"keybase:dir=/k;label=v?pin-value=s3cr3t%zz", "pin-value"},
		{"inprocess:file=/k.pem", ""},
		{"dir=/k;label=v", ""},
	}
	for _, tc := range bad {
		_, err := keybase.ParseURI(tc.uri)
		var ue *signer.URIError
		if !errors.As(err, &ue) || ue.Attr != tc.attr {
			t.Errorf("ParseURI(%q): got %v, want a URIError naming attribute %q", tc.uri, err, tc.attr)
			continue
		}
		if !errors.Is(err, signer.ErrInvalidArgument) && !errors.Is(err, signer.ErrUnsupported) {
			t.Errorf("ParseURI(%q): %v wraps neither ErrInvalidArgument nor ErrUnsupported", tc.uri, err)
		}
		if strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("ParseURI(%q): the error quotes the PIN: %v", tc.uri, err)
		}
		if strings.Contains(err.Error(), "keybase: keybase:") {
			t.Errorf("ParseURI(%q): %v names the package twice", tc.uri, err)
		}
	}
}

// newStore makes a store with one Ed25519 key, "validator", under the
// passphrase pass.
func newStore(t *testing.T, pass string) (string, ed25519.PublicKey) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "keys")
	s, err := keybase.OpenStore(context.Background(), keybase.Config{Dir: dir, Secret: signer.SecretBytes([]byte(pass)), Cost: 4})
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.GenerateKey(context.Background(), signer.Ed25519, "validator")
	if err != nil {
		t.Fatal(err)
	}
	return dir, info.Public.(ed25519.PublicKey)
}

// signer.Open opens keybase keys through the scheme this package
// registers, with the passphrase from the environment or from the
// caller, and returns a nil Signer with its errors.
func TestSignerOpenURI(t *testing.T) {
	ctx := context.Background()
	dir, pub := newStore(t, "env-pass-7731")
	t.Setenv("KEYBASE_TEST_PASS", "env-pass-7731")
	t.Setenv("KEYBASE_TEST_WRONG", "wrong-pass-7731")
	base := (&signer.URI{Scheme: "keybase", Path: []signer.URIAttr{{Name: "dir", Value: dir}, {Name: "label", Value: "validator"}}}).String()
	for _, tc := range []struct {
		query  string
		secret signer.Secret
		mode   keybase.Mode
	}{
		{"?pin-source=env:KEYBASE_TEST_PASS", nil, keybase.UnlockOnce},
		{"?pin-source=env:KEYBASE_TEST_PASS&mode=per-sign", signer.SecretBytes([]byte("not this one")), keybase.PerSign},
		{"", signer.SecretBytes([]byte("env-pass-7731")), keybase.UnlockOnce}, // the caller's secret
	} {
		s, err := signer.OpenSecret(ctx, base+tc.query, tc.secret)
		if err != nil {
			t.Errorf("%s: %v", tc.query, err)
			continue
		}
		if k, ok := s.(*keybase.Signer); !ok || k.Mode() != tc.mode {
			t.Errorf("%s: opened a %T (%v), want a *keybase.Signer in %v", tc.query, s, s, tc.mode)
		}
		msg := []byte("proposal " + tc.query)
		sig, err := s.SignContext(ctx, msg)
		if err != nil {
			t.Errorf("%s: %v", tc.query, err)
		} else if !ed25519.Verify(pub, msg, sig) {
			t.Errorf("%s: signature does not verify", tc.query)
		}
		s.Close()
	}

	missing := (&signer.URI{Scheme: "keybase", Path: []signer.URIAttr{{Name: "dir", Value: dir}, {Name: "label", Value: "absent"}}}).String()
	for _, tc := range []struct {
		uri  string
		want error
	}{
		{base + "?pin-source=env:KEYBASE_TEST_WRONG", signer.ErrWrongPassphrase},
		{base + "?pin-source=env:KEYBASE_TEST_UNSET", signer.ErrInvalidArgument},
		{base, signer.ErrInvalidArgument}, // no secret anywhere
		{missing + "?pin-source=env:KEYBASE_TEST_PASS", signer.ErrKeyNotFound},
		{base + "?mode=slow", signer.ErrInvalidArgument},
	} {
		s, err := signer.Open(ctx, tc.uri)
		if !errors.Is(err, tc.want) || s != nil {
			t.Errorf("signer.Open(%q) = %v, %v; want a nil Signer and %v", tc.uri, s, err, tc.want)
			continue
		}
		if strings.Count(err.Error(), "keybase:") > 1 || strings.Contains(err.Error(), "env-pass-7731") || strings.Contains(err.Error(), "wrong-pass-7731") {
			t.Errorf("signer.Open(%q): %q", tc.uri, err)
		}
	}
	if _, err := signer.Open(ctx, missing+"?pin-source=env:KEYBASE_TEST_PASS"); !strings.Contains(err.Error(), `"absent"`) {
		t.Errorf("a missing key's error does not name it: %v", err)
	}
}

func TestOpenRefuses(t *testing.T) {
	ctx := context.Background()
	dir, _ := newStore(t, "p")
	secret := signer.SecretBytes([]byte("p"))
	done, cancel := context.WithCancel(ctx)
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		cfg  keybase.Config
		want error
	}{
		{"no label", ctx, keybase.Config{Dir: dir, Secret: secret}, signer.ErrInvalidArgument},
		{"no dir", ctx, keybase.Config{Secret: secret, Key: signer.KeyRef{Label: "validator"}}, signer.ErrInvalidArgument},
		{"an id", ctx, keybase.Config{Dir: dir, Secret: secret, Key: signer.KeyRef{Label: "validator", ID: "01"}}, signer.ErrKeyNotFound},
		{"another algorithm", ctx, keybase.Config{Dir: dir, Secret: secret, Key: signer.KeyRef{Label: "validator", Algorithm: signer.ECDSASecp256k1}}, signer.ErrInvalidArgument},
		{"no secret", ctx, keybase.Config{Dir: dir, Key: signer.KeyRef{Label: "validator"}}, signer.ErrInvalidArgument},
		{"cancelled", done, keybase.Config{Dir: dir, Secret: secret, Key: signer.KeyRef{Label: "validator"}}, context.Canceled},
	} {
		s, err := keybase.Open(tc.ctx, tc.cfg)
		if !errors.Is(err, tc.want) || s != nil {
			t.Errorf("%s: got %v, %v; want %v", tc.name, s, err, tc.want)
		}
	}
}
