package yubihsm_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/yubihsm"
	"github.com/signerkit/signerkit/yubihsm/yubihsmsim"
)

func TestParseURI(t *testing.T) {
	for in, want := range map[string]yubihsm.Config{
		"yubihsm:":         {},
		"YUBIHSM:label=v1": {Key: signer.KeyRef{Label: "v1"}},
		"yubihsm:connector=http://127.0.0.1:12345;auth-key=1;id=0x0a01;label=validator;algorithm=ed25519?sessions=2": {
			Connector: "http://127.0.0.1:12345", AuthKeyID: 1, Sessions: 2,
			Key: signer.KeyRef{ID: "0a01", Label: "validator", Algorithm: signer.Ed25519}},
		"yubihsm:connector=hsm.internal:12345;auth-key=0x000A;id=A01;algorithm=p256": {
			Connector: "hsm.internal:12345", AuthKeyID: 10, Key: signer.KeyRef{ID: "0a01", Algorithm: signer.ECDSAP256}},
		"yubihsm:label=a%3Bb%26c%20d?message-limit=500&keep-alive=off&request-timeout=2.5s&domains=1,2,16": {
			Key: signer.KeyRef{Label: "a;b&c d"}, MessageLimit: 500, KeepAlive: -1, RequestTimeout: 2500 * time.Millisecond, Domains: 0x8003},
		"yubihsm:id=ffff?keep-alive=1m&domains=all&sessions=16&sign-timeout=3s": {
			Key: signer.KeyRef{ID: "ffff"}, KeepAlive: time.Minute, Domains: 0xffff, Sessions: 16, SignTimeout: 3 * time.Second},
		"yubihsm:connector=https://proxy.example/hsm/": {Connector: "https://proxy.example/hsm/"},
	} {
		got, err := yubihsm.ParseURI(in)
		if err != nil {
			t.Errorf("ParseURI(%q): %v", in, err)
			continue
		}
		if got.Secret != nil {
			t.Errorf("ParseURI(%q) has a Secret, but the URI names none", in)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("ParseURI(%q) =\n%+v, want\n%+v", in, got, want)
		}
	}
}

// TestParseURISecret checks where pin-source and pin-value take the
// password from.
func TestParseURISecret(t *testing.T) {
	file := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(file, []byte("from a file\nsecond line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("YUBIHSM_TEST_PW", "from the environment")
	for in, want := range map[string]string{
		"yubihsm:label=k?pin-source=env:YUBIHSM_TEST_PW":      "from the environment",
		"yubihsm:label=k?pin-source=" + file:                  "from a file",
		"yubihsm:label=k?pin-source=file:" + file:             "from a file",
		"yubihsm:label=k?pin-value=with%20a%20space%26amp%3B": "with a space&amp;",
	} {
		cfg, err := yubihsm.ParseURI(in)
		if err != nil {
			t.Errorf("ParseURI(%q): %v", in, err)
			continue
		}
		if cfg.Secret == nil {
			t.Errorf("ParseURI(%q): no Secret", in)
			continue
		}
		if pw, err := cfg.Secret(); err != nil || string(pw) != want {
			t.Errorf("ParseURI(%q).Secret() = %q, %v; want %q", in, pw, err, want)
		}
	}
}

// TestParseURIErrors checks that each URI that cannot be used fails with
// a *signer.URIError naming the attribute at fault, wrapping
// ErrInvalidArgument (or ErrUnsupported), and never quoting pin-value.
func TestParseURIErrors(t *testing.T) {
	const pin = "secret-pin-9876"
	for _, tc := range []struct {
		in, attr    string
		unsupported bool
	}{
		{"", "", false},
		{"pkcs11:object=k", "", false},
		{"yubihsm:label", "", false},
		{"yubihsm:slot=1", "slot", false},
		{"yubihsm:label=a;label=b", "label", false},
		{"yubihsm:label=k?connector=http://x", "connector", false},
		{"yubihsm:label=k;sessions=2", "sessions", false},
		{"yubihsm:label=k;pin-value=" + pin, "pin-value", false},
		{"yubihsm:label=k?pin-value=" + pin + "&pin-source=env:X", "pin-value", false},
		{"yubihsm:label=k?pin-value=" + pin + "&bogus=1", "pin-value", false},
		{"yubihsm:label=k?pin-source=https://vault/pw", "pin-source", true},
		{"yubihsm:label=k?pin-source=env:", "pin-source", false},
		{"yubihsm:connector=ftp://x", "connector", false},
		{"yubihsm:connector=http://user:" + pin + "@127.0.0.1:1", "connector", false},
		{"yubihsm:connector=http://", "connector", false},
		{"yubihsm:connector=http://127.0.0.1:1/%3Fa", "connector", false},
		{"yubihsm:auth-key=0", "auth-key", false},
		{"yubihsm:auth-key=10000", "auth-key", false},
		{"yubihsm:auth-key=-1", "auth-key", false},
		{"yubihsm:auth-key=0x", "auth-key", false},
		{"yubihsm:id=0", "id", false},
		{"yubihsm:id=xyz", "id", false},
		{"yubihsm:id=+1", "id", false},
		{"yubihsm:id=", "id", false},
		{"yubihsm:label=", "label", false},
		{"yubihsm:label=%00", "label", false},
		{"yubihsm:label=" + strings.Repeat("x", 41), "label", false},
		{"yubihsm:algorithm=rsa", "algorithm", false},
		{"yubihsm:algorithm=bls12381-minpk", "algorithm", true},
		{"yubihsm:label=k?sessions=0", "sessions", false},
		{"yubihsm:label=k?sessions=17", "sessions", false},
		{"yubihsm:label=k?sessions=two", "sessions", false},
		{"yubihsm:label=k?message-limit=0", "message-limit", false},
		{"yubihsm:label=k?message-limit=10000", "message-limit", false},
		{"yubihsm:label=k?keep-alive=0s", "keep-alive", false},
		{"yubihsm:label=k?keep-alive=-1s", "keep-alive", false},
		{"yubihsm:label=k?keep-alive=sometimes", "keep-alive", false},
		{"yubihsm:label=k?request-timeout=0", "request-timeout", false},
		{"yubihsm:label=k?request-timeout=10", "request-timeout", false},
		{"yubihsm:label=k?sign-timeout=0", "sign-timeout", false},
		{"yubihsm:label=k?sign-timeout=-1s", "sign-timeout", false},
		{"yubihsm:label=k?domains=0", "domains", false},
		{"yubihsm:label=k?domains=17", "domains", false},
		{"yubihsm:label=k?domains=1,,2", "domains", false},
		{"yubihsm:label=k?domains=01", "domains", false},
		{"yubihsm:label=k;simulator=true", "simulator", false},
		{"yubihsm:label=k?simulator=true", "simulator", false}, // yubihsmsim: URIs are the simulator's
	} {
		in := tc.in
		if !strings.Contains(in, "pin-") && strings.HasPrefix(in, "yubihsm:") {
			in += map[bool]string{true: "&", false: "?"}[strings.Contains(in, "?")] + "pin-value=" + pin
		}
		_, err := yubihsm.ParseURI(in)
		var ue *signer.URIError
		if !errors.As(err, &ue) {
			t.Errorf("ParseURI(%q): %v, want a *signer.URIError", in, err)
			continue
		}
		if ue.Attr != tc.attr {
			t.Errorf("ParseURI(%q): %v names attribute %q, want %q", in, err, ue.Attr, tc.attr)
		}
		want := signer.ErrInvalidArgument
		if tc.unsupported {
			want = signer.ErrUnsupported
		}
		if !errors.Is(err, want) {
			t.Errorf("ParseURI(%q): %v does not wrap %v", in, err, want)
		}
		if strings.Contains(err.Error(), pin) {
			t.Errorf("ParseURI(%q): %v shows the PIN", in, err)
		}
	}
}

// secretMark starts every pin-value FuzzParseURI adds, so that it can tell
// the PIN in a message.
const secretMark = "zq7PINmark"

func FuzzParseURI(f *testing.F) {
	for _, s := range []string{
		"yubihsm:connector=http://127.0.0.1:12345;auth-key=1;id=0x0a01;label=validator;algorithm=ed25519?pin-source=env:HSM_PASS&sessions=2",
		"yubihsm:label=a%3Bb?message-limit=500&keep-alive=off&request-timeout=2s&domains=1,2",
		"yubihsm:connector=http://u:p@h;id=xyz",
		"yubihsm:label=k?pin-source=/run/pw",
		"yubihsm:label=k;pin-value=x",
		"yubihsm:algorithm=p384?domains=all",
		"pkcs11:object=k",
	} {
		f.Add(s, "")
		f.Add(s, "1234&x=y;z")
	}
	f.Fuzz(func(t *testing.T, in, pin string) {
		checkPIN := pin != ""
		if checkPIN {
			sep := "?"
			if strings.Contains(in, "?") {
				sep = "&"
			}
			in += sep + "pin-value=" + escapeAll(secretMark+pin)
			// A mark written elsewhere in the URI may be quoted for
			// what it is there.
			prior := in[:strings.LastIndex(in, "pin-value=")]
			if decoded, err := url.PathUnescape(prior); err == nil {
				prior = decoded
			}
			if strings.Contains(strings.ToLower(prior), strings.ToLower(secretMark[:3])) {
				checkPIN = false
			}
		}
		cfg, err := yubihsm.ParseURI(in)
		if err != nil {
			var ue *signer.URIError
			if !errors.As(err, &ue) || !(errors.Is(err, signer.ErrInvalidArgument) || errors.Is(err, signer.ErrUnsupported)) {
				t.Fatalf("ParseURI(%q): %v, want a *signer.URIError", in, err)
			}
			if checkPIN && strings.Contains(err.Error(), secretMark) {
				t.Fatalf("ParseURI(%q): %v shows the PIN", in, err)
			}
			if ue.Scheme == "yubihsm" && !strings.HasPrefix(err.Error(), "yubihsm: ") {
				t.Fatalf("ParseURI(%q): %q does not start with yubihsm: ", in, err)
			}
			return
		}
		for _, s := range []string{fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), cfg.Key.String()} {
			if checkPIN && strings.Contains(s, secretMark) {
				t.Fatalf("ParseURI(%q) prints as %s, with the PIN", in, s)
			}
		}
		if cfg.Sessions < 0 || cfg.Sessions > yubihsm.MaxSessions || cfg.KeepAlive == 0 && strings.Contains(in, "keep-alive=") {
			t.Fatalf("ParseURI(%q) = %+v", in, cfg)
		}
		if cfg.Key.ID != "" {
			if _, err := yubihsm.ParseID(cfg.Key.ID); err != nil {
				t.Fatalf("ParseURI(%q) gave id %q: %v", in, cfg.Key.ID, err)
			}
		}
		if checkPIN {
			if pw, err := cfg.Secret(); err != nil || string(pw) != secretMark+pin {
				t.Fatalf("ParseURI(%q): the Secret gives %q, %v", in, pw, err)
			}
		}
	})
}

// escapeAll percent-encodes every byte but letters and digits.
func escapeAll(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// TestOpenURI opens keys through signer.Open and signer.OpenSecret with
// yubihsm: URIs against a simulated connector, and verifies each
// signature with the standard library.
func TestOpenURI(t *testing.T) {
	dev := yubihsmsim.New(yubihsmsim.Config{})
	srv, err := yubihsmsim.NewServer(dev)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	st := openStore(t, config(srv.URL()))
	ed := generate(t, st, signer.Ed25519, "validator")
	p256 := generate(t, st, signer.ECDSAP256, "tls")
	t.Setenv("YUBIHSM_TEST_PW", "password")
	ctx := context.Background()
	base := "yubihsm:connector=" + srv.URL() + ";auth-key=1;"
	for _, tc := range []struct {
		uri    string
		secret signer.Secret
		want   signer.KeyInfo
	}{
		{base + "label=validator;algorithm=ed25519?pin-source=env:YUBIHSM_TEST_PW&sessions=2", nil, ed},
		{base + "id=0x" + ed.ID + "?pin-value=password", nil, ed},
		{base + "id=" + p256.ID + ";label=tls", signer.SecretBytes([]byte("password")), p256},
		// The URI's own secret wins over the caller's.
		{base + "label=tls?pin-source=env:YUBIHSM_TEST_PW", signer.SecretBytes([]byte("wrong")), p256},
	} {
		s, err := signer.OpenSecret(ctx, tc.uri, tc.secret)
		if err != nil {
			t.Errorf("OpenSecret(%q): %v", tc.uri, err)
			continue
		}
		k, ok := s.(*yubihsm.Signer)
		if !ok || fmt.Sprintf("%04x", k.ID()) != tc.want.ID {
			t.Errorf("OpenSecret(%q) opened %T %v, want the *yubihsm.Signer of key %s", tc.uri, s, s, tc.want.ID)
			s.Close()
			continue
		}
		msg := []byte("a vote opened by URI")
		sig, err := s.SignContext(ctx, msg)
		if err != nil {
			t.Errorf("%s: sign: %v", tc.uri, err)
		} else if !verifyStdlib(tc.want, msg, sig) {
			t.Errorf("%s: the signature does not verify", tc.uri)
		}
		s.Close()
	}
	for _, tc := range []struct {
		uri  string
		want error
	}{
		{base + "label=validator", signer.ErrInvalidArgument}, // no secret at all
		{base + "?pin-value=password", signer.ErrInvalidArgument},
		{base + "label=absent?pin-value=password", signer.ErrKeyNotFound},
		{base + "label=validator?pin-value=wrong", signer.ErrWrongPassphrase},
		{base + "label=validator;algorithm=p256?pin-value=password", signer.ErrUnsupported},
		{base + "label=validator;algorithm=bls12381-minsig?pin-value=password", signer.ErrUnsupported},
		{base + "label=validator?pin-source=env:YUBIHSM_TEST_UNSET", signer.ErrInvalidArgument},
		{"yubihsm:connector=http://127.0.0.1:1;label=validator?pin-value=password", signer.ErrDeviceNotFound},
	} {
		s, err := signer.Open(ctx, tc.uri)
		if !errors.Is(err, tc.want) {
			t.Errorf("Open(%q): %v, want %v", tc.uri, err, tc.want)
		}
		if s != nil {
			t.Errorf("Open(%q) returned %#v with its error, want a nil Signer", tc.uri, s)
		}
	}
	// The session the wrong password began cannot be closed without the
	// password: the device drops it after IdleTimeout, as a YubiHSM 2 does.
	waitOpenSessions(t, dev, 2, "the Store's and the wrong password's; every Signer opened by URI is closed")
}

// verifyStdlib checks sig, as SignContext returns it, with crypto/ed25519
// or crypto/ecdsa alone.
func verifyStdlib(ki signer.KeyInfo, msg, sig []byte) bool {
	switch pub := ki.Public.(type) {
	case ed25519.PublicKey:
		return ed25519.Verify(pub, msg, sig)
	case *ecdsa.PublicKey:
		if len(sig) != 64 {
			return false
		}
		d := sha256.Sum256(msg)
		return ecdsa.Verify(pub, d[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:]))
	}
	return false
}
