package signer_test

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/signerkit/signerkit/signer"
)

func TestParseURI(t *testing.T) {
	u, err := signer.ParseURI("KeyBase:dir=/var/lib/keys;label=val%3Bidator?pin-source=env:PASS&mode=per-sign")
	if err != nil {
		t.Fatal(err)
	}
	if u.Scheme != "keybase" {
		t.Errorf("scheme %q, want keybase", u.Scheme)
	}
	want := []signer.URIAttr{{Name: "dir", Value: "/var/lib/keys"}, {Name: "label", Value: "val;idator"}}
	if len(u.Path) != 2 || u.Path[0] != want[0] || u.Path[1] != want[1] {
		t.Errorf("path %v, want %v", u.Path, want)
	}
	if v, ok := u.Attr("mode"); !ok || v != "per-sign" {
		t.Errorf("mode = %q, %v", v, ok)
	}
	if _, ok := u.Attr("nope"); ok {
		t.Error("Attr found an attribute the URI does not have")
	}
	if err := u.Allow([]string{"dir", "label"}, []string{"pin-source", "pin-value", "mode"}); err != nil {
		t.Error(err)
	}
	if got, want := u.String(), "keybase:dir=/var/lib/keys;label=val%3Bidator?pin-source=env:PASS&mode=per-sign"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	again, err := signer.ParseURI(u.String())
	if err != nil || again.String() != u.String() {
		t.Errorf("String does not parse back to itself: %v", err)
	}
}

func TestParseURIEmpty(t *testing.T) {
	u, err := signer.ParseURI("ledger:")
	if err != nil {
		t.Fatal(err)
	}
	if u.Scheme != "ledger" || len(u.Path) != 0 || len(u.Query) != 0 {
		t.Errorf("got %+v", u)
	}
	if err := u.Allow(nil, nil); err != nil {
		t.Error(err)
	}
}

// TestURIErrors checks that each bad URI is refused with an error that
// wraps ErrInvalidArgument and names the attribute at fault.
func TestURIErrors(t *testing.T) {
	allowPath := []string{"dir", "label"}
	allowQuery := []string{"pin-source", "pin-value", "mode"}
	for _, tc := range []struct {
		uri, attr, problem string
	}{
		{"nocolon", "", "scheme"},
		{":dir=x", "", "scheme"},
		{"1abc:dir=x", "", "scheme"},
		{"keybase:dir", "", "name=value"},
		{"keybase:d!r=x", "", "characters"},
		{"keybase:dir=a;dir=b", "dir", "twice"},
		{"keybase:dir=a?dir=b", "dir", "twice"},
		{"keybase:dir=%zz", "dir", "percent"},
		{"keybase:dri=/x", "dri", "unknown"},
		{"keybase:mode=per-sign", "mode", "query"},
		{"keybase:dir=/x?label=y", "label", "path"},
		{"keybase:dir=/x?pin-value=a&pin-source=env:X", "pin-value", "pin-source"},
	} {
		u, err := signer.ParseURI(tc.uri)
		if err == nil {
			err = u.Allow(allowPath, allowQuery)
		}
		if err == nil && u != nil {
			_, err = u.Secret()
		}
		var ue *signer.URIError
		if !errors.As(err, &ue) || !errors.Is(err, signer.ErrInvalidArgument) {
			t.Errorf("%s: error %v, want a *URIError wrapping ErrInvalidArgument", tc.uri, err)
			continue
		}
		if ue.Attr != tc.attr || !strings.Contains(err.Error(), tc.problem) {
			t.Errorf("%s: error %q (attribute %q), want attribute %q and %q", tc.uri, err, ue.Attr, tc.attr, tc.problem)
		}
	}
}

// TestURIPINNeverQuoted checks that a PIN whose '&' or ';' was not
// escaped is never echoed, neither by the parser nor by Allow, and that
// String leaves pin-value out.
func TestURIPINNeverQuoted(t *testing.T) {
	const pin = "s3cr3t"
	for _, uri := range []string{
		"pkcs11:object=k?pin-value=" + pin + "&tail" + pin,
		"pkcs11:object=k?pin-value=" + pin + "&x" + pin + "=y" + pin,
		"pkcs11:pin-value=" + pin + ";x" + pin + "=y",
		"pkcs11:pin-value=" + pin + ";" + pin + "!",
		"pkcs11:object=k" + pin + "?pin-value=" + pin + "&object=" + pin,
	} {
		u, err := signer.ParseURI(uri)
		if err == nil {
			err = u.Allow([]string{"object", "pin-value"}, []string{"pin-value"})
		}
		if err == nil {
			t.Errorf("%s: accepted", uri)
			continue
		}
		if strings.Contains(err.Error(), pin) {
			t.Errorf("%s: error quotes the PIN: %v", uri, err)
		}
	}
	u, err := signer.ParseURI("pkcs11:object=k?pin-value=" + pin)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(u.String(), pin) {
		t.Errorf("String quotes the PIN: %s", u)
	}
}

func TestURIUint(t *testing.T) {
	u, err := signer.ParseURI("yubihsm:id=0x0a01;auth-key=1;big=70000;neg=-1;plus=+1;empty=;oct=010")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		want uint64
		ok   bool
		bad  bool
	}{
		{"id", 0x0a01, true, false},
		{"auth-key", 1, true, false},
		{"oct", 10, true, false},
		{"big", 0, true, true},
		{"neg", 0, true, true},
		{"plus", 0, true, true},
		{"empty", 0, true, true},
		{"missing", 0, false, false},
	} {
		n, ok, err := u.Uint(tc.name, 0xffff)
		if n != tc.want || ok != tc.ok || (err != nil) != tc.bad {
			t.Errorf("Uint(%s) = %d, %v, %v; want %d, %v, error %v", tc.name, n, ok, err, tc.want, tc.ok, tc.bad)
		}
		var ue *signer.URIError
		if tc.bad && (!errors.As(err, &ue) || ue.Attr != tc.name) {
			t.Errorf("Uint(%s): error %v does not name the attribute", tc.name, err)
		}
	}
}

func TestURISecret(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "pin")
	if err := os.WriteFile(file, []byte("from-file\nsecond line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SIGNERKIT_TEST_PIN", "from-env")
	for _, tc := range []struct{ uri, want string }{
		{"x:a=b?pin-value=in%26uri", "in&uri"},
		{"x:a=b?pin-source=env:SIGNERKIT_TEST_PIN", "from-env"},
		{"x:a=b?pin-source=" + file, "from-file"},
		{"x:a=b?pin-source=file:" + file, "from-file"},
		{"x:a=b?pin-source=file://" + file, "from-file"},
		{"x:a=b?pin-source=FILE://localhost" + file, "from-file"},
	} {
		u, err := signer.ParseURI(tc.uri)
		if err != nil {
			t.Fatal(err)
		}
		s, err := u.Secret()
		if err != nil {
			t.Errorf("%s: %v", tc.uri, err)
			continue
		}
		got, err := s()
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: secret %q, %v; want %q", tc.uri, got, err, tc.want)
		}
		// The caller owns what a Secret returns: wiping it must not change
		// the next call's answer.
		clear(got)
		if again, _ := s(); string(again) != tc.want {
			t.Errorf("%s: secret after wiping the first copy: %q", tc.uri, again)
		}
	}
	u, _ := signer.ParseURI("x:a=b")
	if s, err := u.Secret(); s != nil || err != nil {
		t.Errorf("no pin attributes: got %v, %v; want nil, nil", s != nil, err)
	}
	for _, tc := range []struct {
		src  string
		want error
	}{
		{"https://vault/pin", signer.ErrUnsupported},
		{"env:", signer.ErrInvalidArgument},
		{"file://otherhost/pin", signer.ErrInvalidArgument},
	} {
		u, err := signer.ParseURI("x:a=b?pin-source=" + tc.src)
		if err != nil {
			t.Fatal(err)
		}
		var ue *signer.URIError
		if _, err := u.Secret(); !errors.Is(err, tc.want) || !errors.As(err, &ue) || ue.Attr != "pin-source" {
			t.Errorf("pin-source=%s: %v, want a *URIError for pin-source wrapping %v", tc.src, err, tc.want)
		}
	}
}

func TestSecretSources(t *testing.T) {
	if _, err := signer.SecretEnv("SIGNERKIT_TEST_UNSET_VARIABLE")(); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("unset variable: %v, want ErrInvalidArgument", err)
	}
	missing := filepath.Join(t.TempDir(), "missing")
	if _, err := signer.SecretFile(missing)(); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want os.ErrNotExist", err)
	}
	empty := filepath.Join(t.TempDir(), "empty")
	os.WriteFile(empty, nil, 0o600)
	if b, err := signer.SecretFile(empty)(); err != nil || b == nil || len(b) != 0 {
		t.Errorf("empty file: %q, %v; want an empty secret", b, err)
	}
	crlf := filepath.Join(t.TempDir(), "crlf")
	os.WriteFile(crlf, []byte("pin\r\n"), 0o600)
	if b, _ := signer.SecretFile(crlf)(); string(b) != "pin" {
		t.Errorf("CRLF file: %q, want pin", b)
	}
	orig := []byte("kept")
	s := signer.SecretBytes(orig)
	got, _ := s()
	got[0] = 'X'
	if string(orig) != "kept" {
		t.Error("SecretBytes handed out its own slice")
	}
	clear(orig)
	if got, _ := s(); string(got) != "\x00\x00\x00\x00" {
		t.Errorf("after the caller wiped b, the secret is %q; want it wiped too", got)
	}
}

// FuzzParseURI checks that parsing never panics, that String's output
// parses to the same attributes (pin-value aside), and that no error or
// String ever holds the value of a pin-value attribute.
func FuzzParseURI(f *testing.F) {
	for _, s := range []string{
		"pkcs11:token=a;object=b?pin-value=1234&module-path=/x",
		"keybase:dir=/a%2Fb;label=v?pin-source=env:P",
		"ledger:", "yubihsm:connector=http://h:1;id=0x1", "x:a=%", "x:a=b;a=c", "x:?&", "x:=;",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := signer.ParseURI(s)
		if err != nil {
			return
		}
		// Nothing but Attr and Secret depends on pin-value's value: with
		// another value in its place, Allow's error, String and every
		// format are the same, and none shows the other value. (The PIN
		// itself may also be written elsewhere in the URI, as in
		// A1234:?pin-value=1234, so it is not looked for.)
		const marker = "Zq7-other-pin-Zq7"
		other := &signer.URI{Scheme: u.Scheme, Path: slices.Clone(u.Path), Query: slices.Clone(u.Query)}
		for _, attrs := range [][]signer.URIAttr{other.Path, other.Query} {
			for i := range attrs {
				if attrs[i].Name == signer.AttrPINValue {
					attrs[i].Value = marker
				}
			}
		}
		errText := func(u *signer.URI) string {
			if err := u.Allow([]string{"a"}, []string{"b"}); err != nil {
				return err.Error()
			}
			return ""
		}
		if got, want := errText(other), errText(u); got != want || strings.Contains(got, marker) {
			t.Fatalf("Allow's error depends on pin-value: %q, then %q", want, got)
		}
		out := u.String()
		if got := other.String(); got != out || strings.Contains(got, marker) {
			t.Fatalf("String depends on pin-value: %q, then %q", out, got)
		}
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
			if got, want := fmt.Sprintf(verb, other), fmt.Sprintf(verb, u); strings.Contains(got, marker) || strings.Contains(got, hex.EncodeToString([]byte(marker))) ||
				strings.ReplaceAll(got, "<redacted>", "") != strings.ReplaceAll(want, "<redacted>", "") {
				t.Fatalf("Sprintf(%q) depends on pin-value: %s, then %s", verb, want, got)
			}
		}
		v, err := signer.ParseURI(out)
		if err != nil {
			t.Fatalf("String %q does not parse: %v", out, err)
		}
		if v.String() != out {
			t.Fatalf("round trip: %q then %q", out, v.String())
		}
	})
}

// registryTest registers the "signerkit-test" scheme once per process,
// so that TestRegistry can run again (-count); its OpenFunc calls open, the
// running test's.
var registryTest struct {
	once sync.Once
	open signer.OpenFunc
}

func TestRegistry(t *testing.T) {
	var gotURI string
	var gotSecret []byte
	registryTest.open = func(ctx context.Context, uri string, secret signer.Secret) (signer.Signer, error) {
		gotURI = uri
		if secret != nil {
			gotSecret, _ = secret()
		}
		return nil, errors.New("opened")
	}
	registryTest.once.Do(func() {
		signer.Register("signerkit-test", func(ctx context.Context, uri string, secret signer.Secret) (signer.Signer, error) {
			return registryTest.open(ctx, uri, secret)
		})
	})
	if !contains(signer.Schemes(), "signerkit-test") {
		t.Errorf("Schemes() = %v", signer.Schemes())
	}
	_, err := signer.OpenSecret(context.Background(), "SignerKit-Test:a=b", signer.SecretBytes([]byte("pw")))
	if err == nil || err.Error() != "opened" || gotURI != "SignerKit-Test:a=b" || string(gotSecret) != "pw" {
		t.Errorf("OpenSecret: %v, uri %q, secret %q", err, gotURI, gotSecret)
	}
	if _, err := signer.Open(context.Background(), "nosuchscheme:a=b"); !errors.Is(err, signer.ErrUnsupported) || !strings.Contains(err.Error(), "nosuchscheme") {
		t.Errorf("unknown scheme: %v, want ErrUnsupported naming it", err)
	}
	if _, err := signer.Open(context.Background(), "/etc/key.pem"); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("no scheme: %v, want ErrInvalidArgument", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	gotURI = ""
	if _, err := signer.Open(ctx, "signerkit-test:a=b"); !errors.Is(err, context.Canceled) || gotURI != "" {
		t.Errorf("done context: %v (backend called: %v), want context.Canceled without calling the backend", err, gotURI != "")
	}
	for _, bad := range []string{"signerkit-test", "Upper", "", "a b"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%q) did not panic", bad)
				}
			}()
			signer.Register(bad, func(context.Context, string, signer.Secret) (signer.Signer, error) { return nil, nil })
		}()
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestURIFormatRedactsPIN: a URI or its attributes, formatted with any
// verb, show no pin-value.
func TestURIFormatRedactsPIN(t *testing.T) {
	const pin = "Zq7-s3cr3t-pin"
	u, err := signer.ParseURI("keybase:dir=/k;label=v?pin-value=" + pin + "&mode=per-sign")
	if err != nil {
		t.Fatal(err)
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%10.40s", "%d"} {
		for _, v := range []any{*u, u, u.Query, u.Query[0], &u.Query[0], []*signer.URI{u}, struct{ U signer.URI }{*u}} {
			out := fmt.Sprintf(verb, v)
			if strings.Contains(out, pin) || strings.Contains(strings.ToLower(out), hex.EncodeToString([]byte(pin))) {
				t.Errorf("Sprintf(%q, %T) = %s: shows the PIN", verb, v, out)
			}
		}
	}
	if got := fmt.Sprint(*u); got != u.String() {
		t.Errorf("%%v = %q, want String %q", got, u.String())
	}
	if got := fmt.Sprintf("%+v", *u); !strings.Contains(got, "{Name:pin-value Value:<redacted>}") || !strings.Contains(got, "{Name:mode Value:per-sign}") {
		t.Errorf("%%+v = %s", got)
	}
	if got := fmt.Sprintf("%#v", u); !strings.HasPrefix(got, "signer.URI{") || !strings.Contains(got, `signer.URIAttr{Name:"pin-value", Value:"<redacted>"}`) {
		t.Errorf("%%#v = %s", got)
	}
	if got := fmt.Sprint(u.Path[0]); got != "{dir /k}" {
		t.Errorf("%%v of an attribute = %s, want {dir /k}", got)
	}
	if v, _ := u.Attr(signer.AttrPINValue); v != pin {
		t.Errorf("formatting changed pin-value to %q", v)
	}
}

// TestURIQueryNeverQuoted: no error quotes text of the query, which may be
// (the tail of) a PIN, and a PIN's tail is never named as an attribute.
func TestURIQueryNeverQuoted(t *testing.T) {
	const m = "Zq7"
	for _, uri := range []string{
		"x:a=b?pin-value=" + m + "&" + m + "=%zz", // the tail has a bad escape
		"x:a=b?pin-value=" + m + "&" + m + "=%2",
		"x:a=b?" + m + "!=1",
		"x:a=b?" + m,
		"x:a=b?n=1&" + m,
	} {
		u, err := signer.ParseURI(uri)
		if err == nil {
			t.Errorf("%s: accepted: %v", uri, u)
			continue
		}
		if strings.Contains(err.Error(), m) {
			t.Errorf("%s: error quotes the query: %v", uri, err)
		}
	}
	u, err := signer.ParseURI("x:n=" + m + "?q=" + m + "&big=99999&src=" + m + "https://x")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := u.Uint("n", 10); err == nil || !strings.Contains(err.Error(), m) {
		t.Errorf("Uint of a path attribute: %v, want the value quoted", err)
	}
	for _, name := range []string{"q", "big"} {
		if _, _, err := u.Uint(name, 10); err == nil || strings.Contains(err.Error(), m) || strings.Contains(err.Error(), "99999") {
			t.Errorf("Uint of query attribute %s: %v, want an error that does not quote it", name, err)
		}
	}
	if _, err := signer.SecretSource(m + "https://x"); !errors.Is(err, signer.ErrUnsupported) || strings.Contains(err.Error(), m) {
		t.Errorf("SecretSource: %v, want ErrUnsupported without the source quoted", err)
	}
	u, _ = signer.ParseURI("x:a=b?pin-source=" + m + "https://x")
	if _, err := u.Secret(); !errors.Is(err, signer.ErrUnsupported) || strings.Contains(err.Error(), m) {
		t.Errorf("Secret: %v, want ErrUnsupported without the source quoted", err)
	}
}
