package pkcs11

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"maps"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/signerkit/signerkit/signer"
)

// URI is a parsed RFC 7512 PKCS#11 URI, such as
//
//	pkcs11:token=validator;object=consensus;type=private?module-path=/usr/lib/softhsm/libsofthsm2.so&pin-source=/run/secrets/pin
//
// Path attributes select the token (token, manufacturer, serial, model,
// slot-id, slot-description, slot-manufacturer) and the key (object, id,
// type); query attributes say how to reach it (module-path, module-name)
// and where the PIN is (pin-source, pin-value). library-* attributes are
// parsed and kept but select nothing, and vendor attributes are kept in
// Vendor and VendorQuery. Values are percent-decoded; id is raw bytes.
type URI struct {
	Token, Manufacturer, Serial, Model string
	SlotDescription, SlotManufacturer  string
	// SlotID is the slot-id attribute, or nil.
	SlotID *uint

	LibraryManufacturer, LibraryDescription, LibraryVersion string

	// Object is the key's CKA_LABEL, ID its CKA_ID, Type the object class
	// (public, private, cert, secret-key, data).
	Object string
	ID     []byte
	Type   string

	// ModulePath is the module's file; ModuleName its name without the
	// lib prefix and file suffix, found through the loader's search path.
	ModulePath, ModuleName string
	// PINSource is a file (a path or a file: URI) whose first line is the
	// PIN; PINValue is the PIN itself. String leaves PINValue out.
	PINSource, PINValue string

	// Vendor holds the path attributes RFC 7512 leaves to vendors (any
	// other name of letters, digits, '-' and '_'), VendorQuery those of
	// the query. Config refuses a URI with vendor path attributes, which
	// would narrow the match in ways this package cannot check; vendor
	// query attributes are ignored.
	Vendor, VendorQuery map[string]string
}

// pathAttrs and queryAttrs are the attributes RFC 7512 defines, by where
// they may appear.
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

// ParseURI parses an RFC 7512 pkcs11: URI. It returns an error wrapping
// signer.ErrInvalidArgument for anything else: another scheme, a standard
// attribute in the wrong part, an attribute name with characters RFC 7512
// does not allow, an attribute given twice, a bad
// percent-escape, a slot-id that is not a decimal number or an unknown
// type. The error never quotes pin-value.
func ParseURI(s string) (*URI, error) {
	rest, ok := cutPrefixFold(s, "pkcs11:")
	if !ok {
		return nil, uriErr("does not start with pkcs11:")
	}
	path, query, hasQuery := strings.Cut(rest, "?")
	u := &URI{}
	seen := map[string]bool{}
	if err := u.parseAttrs(path, ";", pathAttrs, queryAttrs, seen); err != nil {
		return nil, err
	}
	if hasQuery {
		if err := u.parseAttrs(query, "&", queryAttrs, pathAttrs, seen); err != nil {
			return nil, err
		}
	}
	if u.PINSource != "" && u.PINValue != "" {
		return nil, uriErr("both pin-source and pin-value")
	}
	return u, nil
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return s, false
	}
	return s[len(prefix):], true
}

func uriErr(format string, args ...any) error {
	return fmt.Errorf("pkcs11: URI %s: %w", fmt.Sprintf(format, args...), signer.ErrInvalidArgument)
}

func (u *URI) parseAttrs(s, sep string, allowed, elsewhere []string, seen map[string]bool) error {
	if s == "" {
		return nil
	}
	for _, part := range strings.Split(s, sep) {
		name, raw, ok := strings.Cut(part, "=")
		if !ok || name == "" {
			return uriErr("attribute %q has no name=value form", truncate(name))
		}
		if seen[name] {
			return uriErr("attribute %s given twice", truncate(name))
		}
		seen[name] = true
		value, err := url.PathUnescape(raw)
		if err != nil {
			return uriErr("attribute %s has a bad percent-escape", truncate(name))
		}
		if slices.Contains(elsewhere, name) {
			return uriErr("attribute %s in the wrong part of the URI", name)
		}
		if !slices.Contains(allowed, name) {
			if !vendorName(name) {
				return uriErr("attribute name %q has characters RFC 7512 does not allow", truncate(name))
			}
			m := &u.Vendor
			if sep == "&" {
				m = &u.VendorQuery
			}
			if *m == nil {
				*m = map[string]string{}
			}
			(*m)[name] = value
			continue
		}
		switch name {
		case "id":
			u.ID = []byte(value)
		case "slot-id":
			n, err := strconv.ParseUint(value, 10, 0)
			if err != nil || value == "" || value[0] == '+' {
				return uriErr("slot-id is not a decimal number")
			}
			id := uint(n)
			u.SlotID = &id
		case "type":
			switch value {
			case "public", "private", "cert", "secret-key", "data":
			default:
				return uriErr("unknown type %q", truncate(value))
			}
			u.Type = value
		default:
			*u.field(name) = value
		}
	}
	return nil
}

// vendorName reports whether name is a valid vendor attribute name
// (RFC 7512 pk11-v-attr-nm: letters, digits, '-' and '_').
func vendorName(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return name != ""
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

// Config returns the Config that u describes. The PIN comes from pin-value
// or, read at each login, from the file pin-source names; neither means no
// PIN (Config.PIN nil), which a caller may set afterwards. module-name
// becomes a library file name the dynamic loader searches for.
func (u *URI) Config() (Config, error) {
	cfg := Config{
		Module:            u.ModulePath,
		TokenLabel:        u.Token,
		TokenSerial:       u.Serial,
		TokenManufacturer: u.Manufacturer,
		TokenModel:        u.Model,
		KeyLabel:          u.Object,
		KeyID:             u.ID,
	}
	if u.SlotID != nil {
		id := *u.SlotID
		cfg.SlotID = &id
	}
	if cfg.Module == "" && u.ModuleName != "" {
		if strings.ContainsAny(u.ModuleName, `/\`) {
			return Config{}, uriErr("module-name %q is a path: use module-path", truncate(u.ModuleName))
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
	if len(u.Vendor) > 0 {
		name := slices.Sorted(maps.Keys(u.Vendor))[0]
		return Config{}, fmt.Errorf("pkcs11: URI vendor attribute %s: %w", truncate(name), signer.ErrUnsupported)
	}
	if u.Type != "" && u.Type != "private" {
		return Config{}, uriErr("type=%s: a signer needs a private key", u.Type)
	}
	switch {
	case u.PINValue != "":
		pin := u.PINValue
		cfg.PIN = func() ([]byte, error) { return []byte(pin), nil }
	case u.PINSource != "":
		src, err := pinSourcePath(u.PINSource)
		if err != nil {
			return Config{}, err
		}
		cfg.PIN = func() ([]byte, error) { return readPINFile(src) }
	}
	return cfg, nil
}

// pinSourcePath returns the file a pin-source names: a plain path or a
// file: URI. Other forms (RFC 7512 leaves them open) are refused.
func pinSourcePath(src string) (string, error) {
	if rest, ok := cutPrefixFold(src, "file:"); ok {
		p, err := url.Parse("file:" + rest)
		if err != nil || (p.Host != "" && p.Host != "localhost") || p.Path == "" {
			return "", uriErr("pin-source is not a local file: URI")
		}
		return p.Path, nil
	}
	if strings.Contains(src, ":") && !strings.HasPrefix(src, "/") {
		return "", fmt.Errorf("pkcs11: URI pin-source %q: only files are supported: %w", truncate(src), signer.ErrUnsupported)
	}
	return src, nil
}

// readPINFile returns the first line of the file at path.
func readPINFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("pkcs11: reading the PIN from pin-source: %w", err)
	}
	line := b
	if i := bytes.IndexAny(b, "\r\n"); i >= 0 { // no string copy of the PIN
		line = b[:i]
	}
	pin := append([]byte(nil), line...)
	clear(b)
	return pin, nil
}

// hexID returns the lower-case hex form of a CKA_ID, as KeyInfo.ID holds.
func hexID(id []byte) string { return hex.EncodeToString(id) }
