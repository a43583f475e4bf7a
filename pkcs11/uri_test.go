package pkcs11_test

import (
	"bytes"
	"errors"
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
}

func TestParseURI(t *testing.T) {
	for _, ex := range uriExamples {
		got, err := pkcs11.ParseURI(ex.in)
		if err != nil {
			t.Errorf("ParseURI(%q): %v", ex.in, err)
			continue
		}
		if !reflect.DeepEqual(*got, ex.want) {
			t.Errorf("ParseURI(%q) =\n%+v, want\n%+v", ex.in, *got, ex.want)
		}
		again, err := pkcs11.ParseURI(got.String())
		if err != nil {
			t.Errorf("ParseURI(%q.String() = %q): %v", ex.in, got.String(), err)
			continue
		}
		want := *got
		want.PINValue = ""
		if !reflect.DeepEqual(*again, want) {
			t.Errorf("%q does not round-trip through String: %q", ex.in, got.String())
		}
	}
}

func TestParseURIRefusals(t *testing.T) {
	for _, in := range []string{
		"",
		"pkcs12:token=a",
		"token=a",
		"pkcs11:token",
		"pkcs11:=a",
		"pkcs11:token=a;token=b",
		"pkcs11:token=a?token=b",                 // a path attribute in the query
		"pkcs11:pin-value=1234",                  // a query attribute in the path
		"pkcs11:token=%zz",                       // a bad escape
		"pkcs11:token=%2",                        // a cut escape
		"pkcs11:slot-id=x",                       // not a number
		"pkcs11:slot-id=-1",                      // not a number
		"pkcs11:slot-id=+1",                      // not a decimal number as RFC 7512 writes them
		"pkcs11:slot-id=99999999999999999999999", // too large
		"pkcs11:type=secret",                     // not a type
		"pkcs11:to.ken=a",                        // not an attribute name
		"pkcs11:object=k?pin-value=1&pin-source=/f",
	} {
		u, err := pkcs11.ParseURI(in)
		if !errors.Is(err, signer.ErrInvalidArgument) {
			t.Errorf("ParseURI(%q) = %+v, %v; want ErrInvalidArgument", in, u, err)
		}
	}
	_, err := pkcs11.ParseURI("pkcs11:token=a;token=b?pin-value=secret-pin-9876")
	if err == nil || strings.Contains(err.Error(), "secret-pin-9876") {
		t.Errorf("error %v shows the PIN", err)
	}
}

func TestURIConfig(t *testing.T) {
	dir := t.TempDir()
	pinFile := filepath.Join(dir, "pin")
	if err := os.WriteFile(pinFile, []byte("4321\nsecond line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{pinFile, "file:" + pinFile, "file://" + pinFile, "file://localhost" + pinFile} {
		u, err := pkcs11.ParseURI("pkcs11:token=t;slot-id=7;object=k;id=%01%02;type=private?module-path=/m.so&pin-source=" + src)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := u.Config()
		if err != nil {
			t.Fatalf("Config with pin-source %s: %v", src, err)
		}
		if cfg.Module != "/m.so" || cfg.TokenLabel != "t" || cfg.SlotID == nil || *cfg.SlotID != 7 ||
			cfg.KeyLabel != "k" || !bytes.Equal(cfg.KeyID, []byte{1, 2}) {
			t.Errorf("Config() = %+v", cfg)
		}
		pin, err := cfg.PIN()
		if err != nil || string(pin) != "4321" {
			t.Errorf("PIN from pin-source %s = %q, %v; want the first line", src, pin, err)
		}
	}
	u, _ := pkcs11.ParseURI("pkcs11:object=k?pin-value=1%2034&module-name=softhsm2")
	cfg, err := u.Config()
	if err != nil {
		t.Fatal(err)
	}
	if pin, _ := cfg.PIN(); string(pin) != "1 34" {
		t.Errorf("PIN from pin-value = %q", pin)
	}
	if !strings.Contains(cfg.Module, "softhsm2") || strings.Contains(cfg.Module, "/") {
		t.Errorf("module-name gave Module %q", cfg.Module)
	}
	for in, want := range map[string]error{
		"pkcs11:object=k;type=public":              signer.ErrInvalidArgument,
		"pkcs11:object=k?module-name=../evil":      signer.ErrInvalidArgument,
		"pkcs11:object=k?pin-source=https://x/pin": signer.ErrUnsupported,
		"pkcs11:object=k?pin-source=file://host/p": signer.ErrInvalidArgument,
		"pkcs11:object=k;vendor-attr=1":            signer.ErrUnsupported,
	} {
		u, err := pkcs11.ParseURI(in)
		if err != nil {
			t.Fatalf("ParseURI(%q): %v", in, err)
		}
		if _, err := u.Config(); !errors.Is(err, want) {
			t.Errorf("%s: Config() error %v, want %v", in, err, want)
		}
	}
	u, _ = pkcs11.ParseURI("pkcs11:object=k?pin-source=" + filepath.Join(dir, "absent"))
	cfg, _ = u.Config()
	if _, err := cfg.PIN(); err == nil {
		t.Error("a missing pin-source file gave no error")
	}
}

func FuzzParseURI(f *testing.F) {
	for _, ex := range uriExamples {
		f.Add(ex.in)
	}
	f.Add("pkcs11:id=%00%ff;x-a=b?x-q=%41")
	f.Fuzz(func(t *testing.T, in string) {
		u, err := pkcs11.ParseURI(in)
		if err != nil {
			if !errors.Is(err, signer.ErrInvalidArgument) {
				t.Fatalf("ParseURI(%q): %v does not wrap ErrInvalidArgument", in, err)
			}
			return
		}
		s := u.String()
		again, err := pkcs11.ParseURI(s)
		if err != nil {
			t.Fatalf("ParseURI(%q) ok, but its String %q does not parse: %v", in, s, err)
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
			t.Fatalf("%q → %q parses to %+v, want %+v", in, s, *again, want)
		}
		u.Config() // must not panic
	})
}
