package pkcs11_test

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/signerkit/signerkit/pkcs11"
	"github.com/signerkit/signerkit/signer"
)

func slot(n uint) *uint { return &n }

// The examples of RFC 7512 §3, and what they say.
var uriExamples = []struct {
	in   string
	want pkcs11.URI
}{
	{"pkcs11:", pkcs11.URI{}},
	{"pkcs11:object=my-pubkey;type=public", pkcs11.URI{Object: "my-pubkey", Type: "public"}},
	{"pkcs11:object=my-key;type=private?pin-source=file:/etc/token",
		pkcs11.URI{Object: "my-key", Type: "private", PINSource: "file:/etc/token"}},
	{"pkcs11:token=The%20Software%20PKCS%2311%20Softtoken;manufacturer=Snake%20Oil,%20Inc.;model=1.0;object=my-certificate;type=cert;id=%69%95%3E%5C%F4%BD%EC%91;serial=?pin-source=file:/etc/token_pin",
		pkcs11.URI{Token: "The Software PKCS#11 Softtoken", Manufacturer: "Snake Oil, Inc.", Model: "1.0",
			Object: "my-certificate", Type: "cert", ID: []byte{0x69, 0x95, 0x3e, 0x5c, 0xf4, 0xbd, 0xec, 0x91},
			PINSource: "file:/etc/token_pin"}},
	{"pkcs11:object=my-sign-key;type=private?module-name=mypkcs11",
		pkcs11.URI{Object: "my-sign-key", Type: "private", ModuleName: "mypkcs11"}},
	{"pkcs11:object=my-sign-key;type=private?module-path=/mnt/libmypkcs11.so.1",
		pkcs11.URI{Object: "my-sign-key", Type: "private", ModulePath: "/mnt/libmypkcs11.so.1"}},
	{"pkcs11:token=Software%20PKCS%2311%20softtoken;manufacturer=Snake%20Oil,%20Inc.?pin-value=the-pin",
		pkcs11.URI{Token: "Software PKCS#11 softtoken", Manufacturer: "Snake Oil, Inc.", PINValue: "the-pin"}},
	{"pkcs11:slot-description=Sun%20Metaslot", pkcs11.URI{SlotDescription: "Sun Metaslot"}},
	{"pkcs11:library-manufacturer=Snake%20Oil,%20Inc.;library-description=Soft%20Token%20Library;library-version=1.23",
		pkcs11.URI{LibraryManufacturer: "Snake Oil, Inc.", LibraryDescription: "Soft Token Library", LibraryVersion: "1.23"}},
	{"pkcs11:token=A%20name%20with%20a%20substring%20%25%3B;object=my-certificate;type=cert",
		pkcs11.URI{Token: "A name with a substring %;", Object: "my-certificate", Type: "cert"}},
	{"pkcs11:token=Name%20with%20a%20small%20A%20with%20acute:%20%C3%A1;object=my-certificate;type=cert",
		pkcs11.URI{Token: "Name with a small A with acute: á", Object: "my-certificate", Type: "cert"}},
	{"pkcs11:token=my-token;object=my-certificate;type=cert;vendor-aaa=value-a?pin-source=file:/etc/token_pin&vendor-bbb=value-b",
		pkcs11.URI{Token: "my-token", Object: "my-certificate", Type: "cert", PINSource: "file:/etc/token_pin",
			Vendor: map[string]string{"vendor-aaa": "value-a"}, VendorQuery: map[string]string{"vendor-bbb": "value-b"}}},
	{"PKCS11:slot-id=3;object=k", pkcs11.URI{SlotID: slot(3), Object: "k"}},
	{"pkcs11:object=k?pin-source=env:TOKEN_PIN", pkcs11.URI{Object: "k", PINSource: "env:TOKEN_PIN"}},
}

func TestDecodeURI(t *testing.T) {
	for _, ex := range uriExamples {
		got, err := pkcs11.DecodeURI(ex.in)
		if err != nil {
			t.Errorf("DecodeURI(%q): %v", ex.in, err)
			continue
		}
		if !reflect.DeepEqual(*got, ex.want) {
			t.Errorf("DecodeURI(%q) =\n%+v, want\n%+v", ex.in, *got, ex.want)
		}
		again, err := pkcs11.DecodeURI(got.String())
		if err != nil {
			t.Errorf("DecodeURI(%q.String() = %q): %v", ex.in, got.String(), err)
			continue
		}
		want := *got
		want.PINValue = ""
		if !reflect.DeepEqual(*again, want) {
			t.Errorf("%q does not round-trip through String: %q", ex.in, got.String())
		}
	}
}

// uriErrorIs reports what is wrong with err, which should be a
// *signer.URIError of the pkcs11 scheme about attr that wraps want.
func uriErrorIs(err error, attr string, want error) string {
	var ue *signer.URIError
	switch {
	case !errors.As(err, &ue):
		return "not a *signer.URIError"
	case !errors.Is(err, want):
		return "does not wrap " + want.Error()
	case ue.Attr != attr:
		return "names attribute " + ue.Attr + ", want " + attr
	case attr != "" && !strings.Contains(err.Error(), "attribute "+attr+":"):
		return "does not say attribute " + attr
	case attr != "" && ue.Scheme != "pkcs11":
		return "names scheme " + ue.Scheme
	}
	return ""
}

func TestDecodeURIRefusals(t *testing.T) {
	for _, c := range []struct{ in, attr string }{
		{"", ""},
		{"pkcs12:token=a", ""},
		{"token=a", ""},
		{"pkcs11:token", ""},
		{"pkcs11:=a", ""},
		{"pkcs11:to.ken=a", ""},                            // not an attribute name
		{"pkcs11:token=a;token=b", "token"},                // twice
		{"pkcs11:token=a?token=b", "token"},                // twice, once in the query
		{"pkcs11:object=k?object=k", "object"},             // twice, once in the query
		{"pkcs11:module-path=/m.so", "module-path"},        // a query attribute in the path
		{"pkcs11:pin-value=1234", "pin-value"},             // a query attribute in the path
		{"pkcs11:object=k?slot-id=1", "slot-id"},           // a path attribute in the query
		{"pkcs11:token=%zz", "token"},                      // a bad escape
		{"pkcs11:token=%2", "token"},                       // a cut escape
		{"pkcs11:slot-id=x", "slot-id"},                    // not a number
		{"pkcs11:slot-id=", "slot-id"},                     // no number
		{"pkcs11:slot-id=-1", "slot-id"},                   // not a number
		{"pkcs11:slot-id=+1", "slot-id"},                   // not a decimal number as RFC 7512 writes them
		{"pkcs11:slot-id=0x1", "slot-id"},                  // not a decimal number
		{"pkcs11:slot-id=99999999999999999999", "slot-id"}, // too large
		{"pkcs11:type=secret", "type"},                     // not a type
		{"pkcs11:object=k?pin-value=1&pin-source=/f", "pin-value"},
		{"pkcs11:object=k?pin-source=/f&pin-value=1", "pin-value"},
		{"pkcs11:object=k?pin-value=12&34=5", "pin-value"}, // an unescaped '&' in the PIN
		{"pkcs11:object=k?pin-value=12&x", "pin-value"},    // an unescaped '&' in the PIN
		{"pkcs11:object=k?pin-source=", "pin-source"},
	} {
		u, err := pkcs11.DecodeURI(c.in)
		if why := uriErrorIs(err, c.attr, signer.ErrInvalidArgument); why != "" {
			t.Errorf("DecodeURI(%q) = %+v, %v: %s", c.in, u, err, why)
		}
		if u != nil {
			t.Errorf("DecodeURI(%q) returned %+v with its error", c.in, u)
		}
		if _, perr := pkcs11.ParseURI(c.in); perr == nil || err == nil || perr.Error() != err.Error() {
			t.Errorf("ParseURI(%q): %v, want DecodeURI's error %v", c.in, perr, err)
		}
	}
	for _, in := range []string{
		"pkcs11:token=a;token=b?pin-value=secret-pin-9876",
		"pkcs11:type=x?pin-value=secret-pin-9876",
		"pkcs11:object=k?pin-value=secret-pin-9876&pin-source=/f",
		"pkcs11:object=k?pin-value=secret-pin-9876&98=7", // an unescaped '&' in the PIN
		"pkcs11:object=k?pin-value=secret-pin-9876&x",
	} {
		_, err := pkcs11.ParseURI(in)
		if err == nil || strings.Contains(err.Error(), "9876") {
			t.Errorf("ParseURI(%q): error %v shows the PIN", in, err)
		}
	}
}

func TestParseURI(t *testing.T) {
	dir := t.TempDir()
	pinFile := filepath.Join(dir, "pin")
	if err := os.WriteFile(pinFile, []byte("4321\nsecond line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SIGNERKIT_TEST_URI_PIN", "8765")
	for src, want := range map[string]string{
		pinFile:                        "4321",
		"file:" + pinFile:              "4321",
		"file://" + pinFile:            "4321",
		"file://localhost" + pinFile:   "4321",
		"env:SIGNERKIT_TEST_URI_PIN":   "8765",
		"ENV:SIGNERKIT_TEST_URI_PIN":   "8765",
		"env%3ASIGNERKIT_TEST_URI_PIN": "8765", // ':' escaped
		"file%3A" + pinFile:            "4321",
	} {
		cfg, err := pkcs11.ParseURI("pkcs11:token=t;serial=s;manufacturer=m;model=mo;slot-id=7;object=k;id=%01%A2;type=private?module-path=/m.so&pin-source=" + src)
		if err != nil {
			t.Fatalf("ParseURI with pin-source %s: %v", src, err)
		}
		if cfg.Module != "/m.so" || cfg.TokenLabel != "t" || cfg.TokenSerial != "s" || cfg.TokenManufacturer != "m" || cfg.TokenModel != "mo" ||
			cfg.SlotID == nil || *cfg.SlotID != 7 || cfg.Key != (signer.KeyRef{Label: "k", ID: "01a2"}) || cfg.PoolSize != 0 || cfg.Locking != pkcs11.LockingSpin {
			t.Errorf("ParseURI gave %+v", cfg)
		}
		if cfg.Secret == nil {
			t.Fatalf("pin-source %s gave no Secret", src)
		}
		pin, err := cfg.Secret()
		if err != nil || string(pin) != want {
			t.Errorf("PIN from pin-source %s = %q, %v; want %q", src, pin, err, want)
		}
	}
	cfg, err := pkcs11.ParseURI("pkcs11:object=k?pin-value=1%2034&module-name=softhsm2")
	if err != nil {
		t.Fatal(err)
	}
	if pin, _ := cfg.Secret(); string(pin) != "1 34" {
		t.Errorf("PIN from pin-value = %q", pin)
	}
	if !strings.Contains(cfg.Module, "softhsm2") || strings.Contains(cfg.Module, "/") {
		t.Errorf("module-name gave Module %q", cfg.Module)
	}
	cfg, err = pkcs11.ParseURI("pkcs11:token=t;library-version=1.0?module-path=/m.so&module-name=other&vendor-q=1")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Secret != nil || cfg.Module != "/m.so" || cfg.Key != (signer.KeyRef{}) || cfg.SlotID != nil {
		t.Errorf("a token URI without a PIN: %+v", cfg)
	}

	// A pin-source is read at each login: a file that goes away is an
	// error then, not at parse time.
	cfg, err = pkcs11.ParseURI("pkcs11:object=k?pin-source=" + filepath.Join(dir, "absent"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.Secret(); err == nil {
		t.Error("a missing pin-source file gave no error")
	}
	cfg, err = pkcs11.ParseURI("pkcs11:object=k?pin-source=env:SIGNERKIT_TEST_URI_UNSET")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.Secret(); !errors.Is(err, signer.ErrInvalidArgument) || !strings.Contains(err.Error(), "SIGNERKIT_TEST_URI_UNSET") {
		t.Errorf("an unset pin-source variable: %v, want ErrInvalidArgument naming it", err)
	}
}

// TestParseURIRefusals: attributes that parse but that Config cannot take.
func TestParseURIRefusals(t *testing.T) {
	for _, c := range []struct {
		in, attr string
		want     error
	}{
		{"pkcs11:object=k;type=public", "type", signer.ErrInvalidArgument},
		{"pkcs11:object=k;type=cert", "type", signer.ErrInvalidArgument},
		{"pkcs11:object=k?module-name=../evil", "module-name", signer.ErrInvalidArgument},
		{"pkcs11:object=k?pin-source=https://x/pin", "pin-source", signer.ErrUnsupported},
		{"pkcs11:object=k?pin-source=file://host/p", "pin-source", signer.ErrInvalidArgument},
		{"pkcs11:object=k?pin-source=env:", "pin-source", signer.ErrInvalidArgument},
		{"pkcs11:object=k;vendor-attr=1", "vendor-attr", signer.ErrUnsupported},
		{"pkcs11:object=k;slot-description=Sun%20Metaslot", "slot-description", signer.ErrUnsupported},
		{"pkcs11:object=k;slot-manufacturer=Sun", "slot-manufacturer", signer.ErrUnsupported},
	} {
		u, err := pkcs11.DecodeURI(c.in)
		if err != nil {
			t.Fatalf("DecodeURI(%q): %v", c.in, err)
		}
		_, err = u.Config()
		if why := uriErrorIs(err, c.attr, c.want); why != "" {
			t.Errorf("%s: Config(): %v: %s", c.in, err, why)
		}
		_, perr := pkcs11.ParseURI(c.in)
		if perr == nil || err == nil || perr.Error() != err.Error() {
			t.Errorf("ParseURI(%q): %v, want Config's error %v", c.in, perr, err)
		}
	}
}

func FuzzParseURI(f *testing.F) {
	for _, ex := range uriExamples {
		f.Add(ex.in)
	}
	f.Add("pkcs11:id=%00%ff;x-a=b?x-q=%41")
	f.Add("pkcs11:object=k?pin-source=env:A&module-name=m")
	f.Add("pkcs11:slot-id=18446744073709551615;type=private")
	const marker = "Zq7-pin-Zq7"
	f.Fuzz(func(t *testing.T, in string) {
		u, err := pkcs11.DecodeURI(in)
		if err != nil {
			var ue *signer.URIError
			if !errors.As(err, &ue) || !errors.Is(err, signer.ErrInvalidArgument) {
				t.Fatalf("DecodeURI(%q): %v is not a *signer.URIError wrapping ErrInvalidArgument", in, err)
			}
			return
		}
		s := u.String()
		again, err := pkcs11.DecodeURI(s)
		if err != nil {
			t.Fatalf("DecodeURI(%q) ok, but its String %q does not decode: %v", in, s, err)
		}
		if again.String() != s {
			t.Fatalf("String is not stable: %q then %q", s, again.String())
		}
		want := *u
		want.PINValue = ""
		if want.ID != nil && len(want.ID) == 0 {
			want.ID = []byte{}
		}
		if !reflect.DeepEqual(*again, want) {
			t.Fatalf("%q → %q decodes to %+v, want %+v", in, s, *again, want)
		}
		cfg, err := u.Config()
		if err != nil {
			var ue *signer.URIError
			if !errors.As(err, &ue) || ue.Attr == "" || !(errors.Is(err, signer.ErrInvalidArgument) || errors.Is(err, signer.ErrUnsupported)) {
				t.Fatalf("Config of %q: %v is not a *signer.URIError naming an attribute", in, err)
			}
		} else if cfg.Key.ID != strings.ToLower(cfg.Key.ID) || len(cfg.Key.ID) != 2*len(u.ID) {
			t.Fatalf("Config of %q: Key.ID %q is not the lower-case hex of %x", in, cfg.Key.ID, u.ID)
		}

		// A PIN added to the URI shows in no error and not in String.
		if strings.Contains(in, marker) {
			return
		}
		withPIN := in + "?pin-value=" + marker
		if strings.Contains(in, "?") {
			withPIN = in + "&pin-value=" + marker
		}
		if _, err := pkcs11.ParseURI(withPIN); err != nil && strings.Contains(err.Error(), marker) {
			t.Fatalf("ParseURI(%q): error %q quotes pin-value", withPIN, err)
		}
		if u, err := pkcs11.DecodeURI(withPIN); err == nil && strings.Contains(u.String(), marker) {
			t.Fatalf("String of %q quotes pin-value: %q", withPIN, u.String())
		}
	})
}

// TestURIFormatRedactsPIN: a URI, or the Config it gives, formatted with
// any verb shows no PIN.
func TestURIFormatRedactsPIN(t *testing.T) {
	const pin = "Zq7-s3cr3t-pin"
	u, err := pkcs11.DecodeURI("pkcs11:token=t;object=k?module-path=/m.so&pin-value=" + pin)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := u.Config()
	if err != nil {
		t.Fatal(err)
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%10.40s", "%-v", "%d"} {
		for _, v := range []any{*u, u, []pkcs11.URI{*u}, map[string]*pkcs11.URI{"k": u}, struct{ U pkcs11.URI }{*u}, cfg, &cfg} {
			out := fmt.Sprintf(verb, v)
			if strings.Contains(out, pin) || strings.Contains(strings.ToLower(out), hex.EncodeToString([]byte(pin))) {
				t.Errorf("Sprintf(%q, %T) = %s: shows the PIN", verb, v, out)
			}
		}
	}
	if got, want := fmt.Sprint(u), u.String(); got != want {
		t.Errorf("%%v = %q, want String %q", got, want)
	}
	if got := fmt.Sprintf("%+v", *u); !strings.Contains(got, "PINValue:<redacted>") || !strings.Contains(got, "ModulePath:/m.so") {
		t.Errorf("%%+v = %s, want the fields with PINValue redacted", got)
	}
	if got := fmt.Sprintf("%#v", u); !strings.HasPrefix(got, "pkcs11.URI{") || !strings.Contains(got, `PINValue:"<redacted>"`) {
		t.Errorf("%%#v = %s, want Go syntax with PINValue redacted", got)
	}
	if got := fmt.Sprintf("%#v", pkcs11.URI{Object: "k"}); strings.Contains(got, "redacted") {
		t.Errorf("%%#v of a URI without a PIN = %s", got)
	}
	if u.PINValue != pin {
		t.Errorf("formatting changed PINValue to %q", u.PINValue)
	}
}

// TestURIErrorsNeverQuoteQuery: errors about the query of a URI quote none
// of its text, which may be (the tail of) a PIN; a PIN with an unescaped
// '&' is refused, not cut short and sent to the token.
func TestURIErrorsNeverQuoteQuery(t *testing.T) {
	const m = "Zq7"
	for _, in := range []string{
		"pkcs11:object=k?pin-value=" + m + "a&" + m + "b=c",                   // the tail reads as a vendor attribute
		"pkcs11:object=k?pin-value=" + m + "a&" + m + "b=c&module-path=/m.so", // and a known one follows
		"pkcs11:object=k?module-path=/m.so&pin-value=" + m + "a&" + m + "b=%zz",
		"pkcs11:object=k?pin-value=" + m + "a&" + m + "b=%zz", // the tail has a bad escape
		"pkcs11:object=k?pin-value=" + m + "a&" + m + "b",     // the tail is not name=value
		"pkcs11:object=k?pin-value=" + m + "a&" + m + "!b=c",
		"pkcs11:object=k?pin-value=" + m + "a&pin-value=" + m + "b",
		"pkcs11:object=k?pin-value=" + m + "a&pin-source=" + m + "b",
		"pkcs11:object=k?pin-value=" + m + "a&object=" + m + "b",
		"pkcs11:object=k?" + m + "!x=1",                  // not an attribute name
		"pkcs11:object=k?" + m,                           // not name=value
		"pkcs11:object=k?module-name=../" + m,            // a path
		"pkcs11:object=k?pin-source=" + m + "https://x/", // not env: or file:
		"pkcs11:object=k?pin-source=" + m + "://x/",
	} {
		cfg, err := pkcs11.ParseURI(in)
		if err == nil {
			t.Errorf("ParseURI(%q) = %+v, accepted", in, cfg)
			continue
		}
		if strings.Contains(err.Error(), m) {
			t.Errorf("ParseURI(%q): error %q quotes the query", in, err)
		}
		var ue *signer.URIError
		if !errors.As(err, &ue) {
			t.Errorf("ParseURI(%q): %v is not a *signer.URIError", in, err)
		}
	}
}
