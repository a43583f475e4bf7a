package pkcs11

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/signerkit/signerkit/signer"
)

func init() {
	signer.Register("pkcs11", openURI)
}

// openURI is the signer.OpenFunc of the pkcs11 scheme: the URI's
// pin-source or pin-value, else the caller's secret, is the PIN.
func openURI(ctx context.Context, uri string, secret signer.Secret) (signer.Signer, error) {
	cfg, err := ParseURI(uri)
	if err != nil {
		return nil, err
	}
	if cfg.Secret == nil {
		cfg.Secret = secret
	}
	s, err := Open(ctx, cfg)
	if err != nil {
		return nil, err // not s: a nil *Signer in the interface is not nil
	}
	return s, nil
}

// ParseURI returns the Config that an RFC 7512 pkcs11: URI describes.
// signer.Open and signer.OpenSecret open such a URI once this package is
// imported; Open opens the Config, OpenStore its token alone. For example
//
//	pkcs11:token=validator;object=consensus?module-path=/usr/lib/softhsm/libsofthsm2.so&pin-source=env:TOKEN_PIN
//
// The path attributes say which token and key:
//
//	token=<label>             Config.TokenLabel
//	serial=<serial number>    Config.TokenSerial
//	manufacturer=<id>         Config.TokenManufacturer
//	model=<model>             Config.TokenModel
//	slot-id=<decimal>         Config.SlotID
//	object=<label>            Config.Key.Label, the key's CKA_LABEL
//	id=<bytes>                Config.Key.ID, the key's CKA_ID as raw
//	                          percent-encoded bytes: id=%01%a0 is "01a0"
//	type=private              the only object type a signer opens
//	library-manufacturer, library-description, library-version
//	                          accepted; they describe the module, which
//	                          module-path or module-name chooses
//
// and the query attributes how to reach it and where the PIN is:
//
//	module-path=<file>        Config.Module
//	module-name=<name>        Config.Module, as libname.so (.dylib on
//	                          macOS, name.dll on Windows) found by the
//	                          dynamic loader; module-path wins
//	pin-source=<source>       Config.Secret, read at each login from
//	                          env:NAME, file:/path or /path
//	                          (signer.SecretSource)
//	pin-value=<PIN>           Config.Secret, the PIN written in the URI
//
// With neither pin-source nor pin-value, Config.Secret is nil: no login,
// unless the caller sets one (signer.OpenSecret does). Values are
// percent-decoded; escape ';', '?', '&' and '%' in them. slot-description,
// slot-manufacturer and vendor path attributes (names RFC 7512 leaves to
// vendors), which would narrow the match in ways this package does not
// check, are refused with an error wrapping signer.ErrUnsupported; vendor
// query attributes are ignored before pin-value and refused after it.
// Errors are *signer.URIError values, which name the attribute at fault
// and wrap signer.ErrInvalidArgument (or ErrUnsupported); they never quote
// pin-value, nor any other text of the query.
//
// Prefer pin-source to pin-value: a URI is logged, kept in shell history
// and shown in process listings. A PIN written in pin-value must have
// every '&', ';', '?', '#' and '%' in it percent-encoded (%26, %3B, %3F,
// %23, %25): an unescaped '&' cuts the PIN short, and since a wrong PIN
// costs one of the token's few tries before it locks, what follows an
// unescaped '&' is refused rather than guessed at — but a tail that reads
// as a known attribute (12&module-name=x) or a '%' followed by two hex
// digits cannot be told from what was meant.
func ParseURI(uri string) (Config, error) {
	u, err := DecodeURI(uri)
	if err != nil {
		return Config{}, err
	}
	return u.Config()
}

// URI is an RFC 7512 pkcs11: URI attribute by attribute, for reading
// attributes that Config has no field for and for writing URIs (String):
//
//	pkcs11:token=validator;object=consensus;type=private?module-path=/usr/lib/softhsm/libsofthsm2.so&pin-source=/run/secrets/pin
//
// DecodeURI fills it from a URI's text and Config turns it into a Config,
// as ParseURI does in one step. Values are held percent-decoded; ID holds
// raw bytes. A URI formats without its PIN whatever the fmt verb: %v and
// %s print String (which leaves pin-value out), %q quotes it, and %+v and
// %#v print the fields with PINValue replaced by <redacted>.
type URI struct {
	// Token, Manufacturer, Serial and Model are the token's attributes
	// token, manufacturer, serial and model.
	Token, Manufacturer, Serial, Model string
	// SlotDescription and SlotManufacturer are the attributes
	// slot-description and slot-manufacturer, which Config refuses.
	SlotDescription, SlotManufacturer string
	// SlotID is the slot-id attribute, or nil.
	SlotID *uint

	// LibraryManufacturer, LibraryDescription and LibraryVersion are the
	// module's attributes library-manufacturer, library-description and
	// library-version, which select nothing.
	LibraryManufacturer, LibraryDescription, LibraryVersion string

	// Object is the key's CKA_LABEL (object), ID its CKA_ID (id) and Type
	// the object class (type: public, private, cert, secret-key or data).
	Object string
	ID     []byte
	Type   string

	// ModulePath is the module's file (module-path); ModuleName its name
	// without the lib prefix and file suffix (module-name), found through
	// the loader's search path.
	ModulePath, ModuleName string
	// PINSource names where the PIN is (pin-source: env:NAME, file:/path
	// or /path; see signer.SecretSource); PINValue is the PIN itself
	// (pin-value), which String leaves out.
	PINSource, PINValue string

	// Vendor holds the path attributes RFC 7512 leaves to vendors (any
	// other name of letters, digits, '-' and '_'), VendorQuery those of
	// the query. Config refuses a URI with vendor path attributes and
	// ignores vendor query attributes.
	Vendor, VendorQuery map[string]string
}

// pathAttrs and queryAttrs are the attributes RFC 7512 defines, by where
// they may appear, in the order String writes them.
var pathAttrs = []string{
	"token", "manufacturer", "serial", "model",
	"library-manufacturer", "library-description", "library-version",
	"slot-description", "slot-manufacturer", "slot-id",
	"object", "type", "id",
}

var queryAttrs = []string{"pin-source", "pin-value", "module-name", "module-path"}

func (u *URI) field(name string) *string {
	switch name {
	case "token":
		return &u.Token
	case "manufacturer":
		return &u.Manufacturer
	case "serial":
		return &u.Serial
	case "model":
		return &u.Model
	case "library-manufacturer":
		return &u.LibraryManufacturer
	case "library-description":
		return &u.LibraryDescription
	case "library-version":
		return &u.LibraryVersion
	case "slot-description":
		return &u.SlotDescription
	case "slot-manufacturer":
		return &u.SlotManufacturer
	case "object":
		return &u.Object
	case "type":
		return &u.Type
	case "pin-source":
		return &u.PINSource
	case "pin-value":
		return &u.PINValue
	case "module-name":
		return &u.ModuleName
	case "module-path":
		return &u.ModulePath
	}
	return nil
}

// DecodeURI parses the text of an RFC 7512 pkcs11: URI into its
// attributes, checking its form only (Config checks what the attributes
// say). It refuses, with a *signer.URIError that wraps
// signer.ErrInvalidArgument and names the attribute when one is at fault:
// another scheme, an attribute that is
// not name=value or whose name has characters RFC 7512 does not allow, an
// attribute given twice, a standard attribute in the wrong part of the
// URI, a bad percent-escape, a slot-id that is not a decimal number, an
// unknown type, an empty pin-source, pin-source with pin-value, and a
// vendor attribute after pin-value (most likely the tail of a PIN whose
// '&' was not escaped). The error never quotes pin-value.
func DecodeURI(s string) (*URI, error) {
	su, err := signer.ParseURI(s)
	if err != nil {
		return nil, err
	}
	if su.Scheme != "pkcs11" {
		return nil, &signer.URIError{Scheme: su.Scheme, Problem: "not a pkcs11: URI"}
	}
	u := &URI{}
	if err := u.set(su, su.Path, "path", pathAttrs, queryAttrs, &u.Vendor); err != nil {
		return nil, err
	}
	if err := u.set(su, su.Query, "query", queryAttrs, pathAttrs, &u.VendorQuery); err != nil {
		return nil, err
	}
	if u.PINSource != "" && u.PINValue != "" {
		return nil, su.Errorf(signer.AttrPINValue, "given with pin-source: use one")
	}
	return u, nil
}

// set stores the attributes of one part of the URI (where: "path" or
// "query"): those of here by name, vendor attributes in *vendor. Those of
// there belong in the other part.
func (u *URI) set(su *signer.URI, attrs []signer.URIAttr, where string, here, there []string, vendor *map[string]string) error {
	pinSeen := false
	for _, a := range attrs {
		name, value := a.Name, a.Value
		switch {
		case slices.Contains(there, name):
			other := "query"
			if where == "query" {
				other = "path"
			}
			return su.Errorf(name, "belongs in the %s of the URI", other)
		case !slices.Contains(here, name) && pinSeen:
			// Most likely the tail of a PIN with an unescaped '&': do not
			// log in with its head, nor quote any of it.
			return su.Errorf(signer.AttrPINValue, "followed by a vendor attribute (escape '&' and ';' in a PIN as %%26 and %%3B, or put vendor attributes first)")
		case name == signer.AttrPINSource && value == "":
			return su.Errorf(name, "is empty")
		case !slices.Contains(here, name):
			if *vendor == nil {
				*vendor = map[string]string{}
			}
			(*vendor)[name] = value
		case name == "id":
			u.ID = []byte(value)
		case name == "slot-id":
			n, err := strconv.ParseUint(value, 10, 0)
			if err != nil || value == "" || value[0] == '+' {
				return su.Errorf(name, "%q is not a decimal number that fits a CK_SLOT_ID", truncate(value))
			}
			id := uint(n)
			u.SlotID = &id
		case name == "type":
			switch value {
			case "public", "private", "cert", "secret-key", "data":
			default:
				return su.Errorf(name, "%q is not public, private, cert, secret-key or data", truncate(value))
			}
			u.Type = value
		default:
			*u.field(name) = value
		}
		pinSeen = pinSeen || name == signer.AttrPINValue
	}
	return nil
}

// redacted replaces PINValue when a URI is formatted.
const redacted = "<redacted>"

// Format formats u for every fmt verb without its PIN: %v and %s print
// String, %q quotes it, %+v prints the fields and %#v Go syntax, with
// PINValue replaced by <redacted>.
func (u URI) Format(f fmt.State, verb rune) {
	switch {
	case verb == 'v' && f.Flag('#'):
		io.WriteString(f, u.GoString())
	case verb == 'v' && f.Flag('+'):
		fmt.Fprintf(f, "%+v", uriFields(u.redact()))
	default:
		fmt.Fprintf(f, fmt.FormatString(f, verb), u.String())
	}
}

// uriFields is URI without its methods, for printing its fields.
type uriFields URI

func (u URI) redact() URI {
	if u.PINValue != "" {
		u.PINValue = redacted
	}
	return u
}

// GoString returns u in Go syntax with PINValue replaced by <redacted>.
func (u URI) GoString() string {
	return "pkcs11.URI" + strings.TrimPrefix(fmt.Sprintf("%#v", uriFields(u.redact())), "pkcs11.uriFields")
}

// truncate keeps bad input short in error messages.
func truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// String returns u as a pkcs11: URI, attributes in RFC 7512 order, values
// percent-encoded where needed, without pin-value (a secret).
func (u *URI) String() string {
	var path, query []string
	for _, name := range pathAttrs {
		var v string
		switch name {
		case "slot-id":
			if u.SlotID == nil {
				continue
			}
			v = strconv.FormatUint(uint64(*u.SlotID), 10)
		case "id":
			if u.ID == nil {
				continue
			}
			v = string(u.ID)
		default:
			v = *u.field(name)
			if v == "" {
				continue
			}
		}
		path = append(path, name+"="+escape(v, pathAvail))
	}
	for _, name := range queryAttrs {
		if v := *u.field(name); v != "" && name != "pin-value" {
			query = append(query, name+"="+escape(v, queryAvail))
		}
	}
	path = appendVendor(path, u.Vendor, pathAvail)
	query = appendVendor(query, u.VendorQuery, queryAvail)
	s := "pkcs11:" + strings.Join(path, ";")
	if len(query) > 0 {
		s += "?" + strings.Join(query, "&")
	}
	return s
}

func appendVendor(attrs []string, m map[string]string, avail string) []string {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		attrs = append(attrs, k+"="+escape(m[k], avail))
	}
	return attrs
}

// The reserved characters RFC 7512 lets a value hold unescaped in the path
// (pk11-pres-avail) and in the query (pk11-qres-avail).
const (
	pathAvail  = ":[]@!$'()*+,=&"
	queryAvail = ":[]@!$'()*+,=/?|"
)

// escape percent-encodes everything but RFC 3986 unreserved characters and
// those in avail, so a value never holds a separator of its part.
func escape(v, avail string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~", c) >= 0 || strings.IndexByte(avail, c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// uriError is a *signer.URIError of the pkcs11 scheme about attr.
func uriError(attr, format string, args ...any) *signer.URIError {
	return &signer.URIError{Scheme: "pkcs11", Attr: attr, Problem: fmt.Sprintf(format, args...)}
}

// Config returns the Config that u describes (see ParseURI). The PIN comes
// from pin-value or, at each login, from what pin-source names; neither
// means Config.Secret nil, which a caller may set afterwards. module-name
// becomes a library file name the dynamic loader searches for.
func (u *URI) Config() (Config, error) {
	cfg := Config{
		Module:            u.ModulePath,
		TokenLabel:        u.Token,
		TokenSerial:       u.Serial,
		TokenManufacturer: u.Manufacturer,
		TokenModel:        u.Model,
		Key:               signer.KeyRef{Label: u.Object, ID: hexID(u.ID)},
	}
	if u.SlotID != nil {
		id := *u.SlotID
		cfg.SlotID = &id
	}
	if cfg.Module == "" && u.ModuleName != "" {
		if strings.ContainsAny(u.ModuleName, `/\`) {
			// Query text is never quoted: it may be the tail of a PIN.
			return Config{}, uriError("module-name", "is a path: use module-path")
		}
		switch runtime.GOOS {
		case "darwin":
			cfg.Module = "lib" + u.ModuleName + ".dylib"
		case "windows":
			cfg.Module = u.ModuleName + ".dll"
		default:
			cfg.Module = "lib" + u.ModuleName + ".so"
		}
	}
	for _, a := range []struct{ name, value string }{{"slot-description", u.SlotDescription}, {"slot-manufacturer", u.SlotManufacturer}} {
		if a.value != "" {
			e := uriError(a.name, "is not supported: select the slot by slot-id")
			e.Unsupported = true
			return Config{}, e
		}
	}
	if len(u.Vendor) > 0 {
		name := slices.Sorted(maps.Keys(u.Vendor))[0]
		e := uriError(name, "is a vendor attribute, which would narrow the match in a way this package does not check")
		e.Unsupported = true
		return Config{}, e
	}
	if u.Type != "" && u.Type != "private" {
		return Config{}, uriError("type", "%s: a signer needs a private key (type=private)", u.Type)
	}
	switch {
	case u.PINSource != "" && u.PINValue != "":
		return Config{}, uriError(signer.AttrPINValue, "given with pin-source: use one")
	case u.PINValue != "":
		cfg.Secret = signer.SecretBytes([]byte(u.PINValue))
	case u.PINSource != "":
		s, err := signer.SecretSource(u.PINSource)
		if err != nil {
			e := uriError(signer.AttrPINSource, "%s", strings.TrimPrefix(err.Error(), "signer: "))
			e.Unsupported = errors.Is(err, signer.ErrUnsupported)
			return Config{}, e
		}
		cfg.Secret = s
	}
	return cfg, nil
}

// hexID returns the lower-case hex form of a CKA_ID, as KeyInfo.ID holds.
func hexID(id []byte) string { return hex.EncodeToString(id) }
