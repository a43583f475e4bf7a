package signer

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// URI is a key URI in the form RFC 7512 gives PKCS#11 URIs, which every
// signerkit scheme follows:
//
//	scheme:name=value;name=value?name=value&name=value
//
// Path attributes, separated by ';', say where the key is and which key it
// is; query attributes, after '?' and separated by '&', say how to reach
// it and where its secret comes from. Values are percent-decoded: write
// ';', '?', '&' and '%' inside a value as %3B, %3F, %26 and %25. Unlike
// RFC 7512, values may hold '/' and ':' as they are, so a path or URL
// reads naturally (keybase:dir=/var/lib/keys;label=validator).
//
// Secrets never go in the URI itself: pin-source names where the secret
// is (SecretSource: env:NAME, file:/path or /path), and pin-value, which
// holds the secret in the URI, is for those who write it knowingly, with
// every '&', ';', '?' and '%' in it percent-encoded. String leaves
// pin-value out, every fmt verb redacts it (%v and %s print String, %+v
// and %#v the fields with pin-value's value replaced), and no error quotes
// it or any other text of the query.
type URI struct {
	// Scheme is the scheme, lower-cased (keybase, ledger, pkcs11, …).
	Scheme string
	// Path and Query are the attributes in the order written.
	Path, Query []URIAttr
}

// URIAttr is one name=value attribute of a URI.
type URIAttr struct {
	Name, Value string
}

// URIError is a URI that cannot be used: it names the scheme and, when one
// is at fault, the attribute. It wraps ErrInvalidArgument, or
// ErrUnsupported when Unsupported is set.
type URIError struct {
	Scheme string
	// Attr is the offending attribute's name, or empty when the URI as a
	// whole is at fault.
	Attr string
	// Problem says what is wrong, without quoting secrets.
	Problem string
	// Unsupported marks something valid that this build or backend cannot
	// do.
	Unsupported bool
}

func (e *URIError) Error() string {
	// A URI of a backend's scheme is that backend's error, and starts
	// with its name as the backend's other errors do.
	s := "signer: URI: "
	if e.Scheme != "" {
		s = e.Scheme + ": URI: "
	}
	if e.Attr != "" {
		s += "attribute " + e.Attr + ": "
	}
	return s + e.Problem
}

// Unwrap returns ErrInvalidArgument, or ErrUnsupported.
func (e *URIError) Unwrap() error {
	if e.Unsupported {
		return ErrUnsupported
	}
	return ErrInvalidArgument
}

// Common attribute names that several schemes share.
const (
	// AttrPINSource names where the secret is (see SecretSource).
	AttrPINSource = "pin-source"
	// AttrPINValue holds the secret itself.
	AttrPINValue = "pin-value"
)

// ParseURI splits s into its scheme and attributes and percent-decodes the
// values. It checks the form only: which attributes a scheme takes is the
// backend's to say (Allow). Errors are *URIError values that name the
// attribute at fault; an attribute name must be letters, digits, '-' and
// '_', and may appear once in the whole URI.
func ParseURI(s string) (*URI, error) {
	i := strings.IndexByte(s, ':')
	if i <= 0 || !schemeName(s[:i]) {
		return nil, &URIError{Problem: "does not start with a scheme such as pkcs11: or keybase:"}
	}
	u := &URI{Scheme: strings.ToLower(s[:i])}
	path, query, hasQuery := strings.Cut(s[i+1:], "?")
	seen := map[string]bool{}
	var err error
	if u.Path, err = u.parseAttrs(path, ";", seen, false); err != nil {
		return nil, err
	}
	if hasQuery {
		pinSeen := false
		for _, a := range u.Path {
			pinSeen = pinSeen || a.Name == AttrPINValue
		}
		if u.Query, err = u.parseAttrs(query, "&", seen, pinSeen); err != nil {
			return nil, err
		}
	}
	return u, nil
}

func (u *URI) parseAttrs(s, sep string, seen map[string]bool, pinSeen bool) ([]URIAttr, error) {
	if s == "" {
		return nil, nil
	}
	var attrs []URIAttr
	query := sep == "&"
	for _, part := range strings.Split(s, sep) {
		name, raw, ok := strings.Cut(part, "=")
		if !ok || !attrName(name) {
			switch {
			case pinSeen:
				// A '&' or ';' in an unescaped pin-value starts what looks
				// like another attribute: do not echo any of it.
				return nil, &URIError{Scheme: u.Scheme, Attr: AttrPINValue, Problem: "followed by text that is not an attribute (escape '&' and ';' in a PIN as %26 and %3B)"}
			case query:
				// Query text may hold a secret's source: never quoted.
				return nil, &URIError{Scheme: u.Scheme, Problem: "the query holds text that is not a name=value attribute with a name of letters, digits, '-' and '_'"}
			case !ok:
				return nil, &URIError{Scheme: u.Scheme, Problem: fmt.Sprintf("%q is not a name=value attribute", truncate(part))}
			}
			return nil, &URIError{Scheme: u.Scheme, Problem: fmt.Sprintf("attribute name %q has characters other than letters, digits, '-' and '_'", truncate(name))}
		}
		if seen[name] {
			if pinSeen {
				// Perhaps the tail of an unescaped PIN: do not name it.
				return nil, &URIError{Scheme: u.Scheme, Attr: AttrPINValue, Problem: "followed by an attribute given twice (escape '&' and ';' in a PIN as %26 and %3B)"}
			}
			return nil, &URIError{Scheme: u.Scheme, Attr: name, Problem: "given twice"}
		}
		seen[name] = true
		value, err := url.PathUnescape(raw)
		if err != nil {
			if pinSeen {
				// Perhaps the tail of an unescaped PIN: do not name it.
				return nil, &URIError{Scheme: u.Scheme, Attr: AttrPINValue, Problem: "followed by an attribute with a bad percent-escape (escape '&', ';' and '%' in a PIN as %26, %3B and %25)"}
			}
			return nil, &URIError{Scheme: u.Scheme, Attr: name, Problem: "bad percent-escape"}
		}
		pinSeen = pinSeen || name == AttrPINValue
		attrs = append(attrs, URIAttr{Name: name, Value: value})
	}
	return attrs, nil
}

func schemeName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		if !('a' <= c && c <= 'z' || i > 0 && ('0' <= s[i] && s[i] <= '9' || s[i] == '+' || s[i] == '-' || s[i] == '.')) {
			return false
		}
	}
	return s != ""
}

func attrName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return s != ""
}

// Allow checks that every path attribute of u is one of path and every
// query attribute one of query. The error names the first attribute that
// is unknown or in the wrong part; an unknown one written after pin-value
// is not named, since it may be the tail of an unescaped PIN.
func (u *URI) Allow(path, query []string) error {
	check := func(attrs []URIAttr, here, there []string, where string) error {
		pinSeen := false
		for _, a := range attrs {
			switch {
			case slices.Contains(here, a.Name):
			case slices.Contains(there, a.Name):
				return &URIError{Scheme: u.Scheme, Attr: a.Name, Problem: "belongs in the " + other(where) + " of the URI"}
			case pinSeen:
				return &URIError{Scheme: u.Scheme, Attr: AttrPINValue, Problem: "followed by an unknown attribute (escape '&' and ';' in a PIN as %26 and %3B)"}
			default:
				return &URIError{Scheme: u.Scheme, Attr: a.Name, Problem: "unknown to the " + u.Scheme + " scheme (it takes " + known(path, query) + ")"}
			}
			pinSeen = pinSeen || a.Name == AttrPINValue
		}
		return nil
	}
	if err := check(u.Path, path, query, "path"); err != nil {
		return err
	}
	return check(u.Query, query, path, "query")
}

func other(where string) string {
	if where == "path" {
		return "query"
	}
	return "path"
}

func known(path, query []string) string {
	var b strings.Builder
	b.WriteString(strings.Join(path, ";"))
	if len(query) > 0 {
		b.WriteString("?" + strings.Join(query, "&"))
	}
	if b.Len() == 0 {
		return "no attributes"
	}
	return b.String()
}

// Attr returns the value of the attribute name, from the path or the query.
func (u *URI) Attr(name string) (string, bool) {
	for _, attrs := range [][]URIAttr{u.Path, u.Query} {
		for _, a := range attrs {
			if a.Name == name {
				return a.Value, true
			}
		}
	}
	return "", false
}

// Uint returns the attribute name as an unsigned integer of at most max,
// written in decimal or as 0x-prefixed hex; ok is false when u has no such
// attribute. Anything else is a *URIError that names it.
func (u *URI) Uint(name string, max uint64) (n uint64, ok bool, err error) {
	v, ok := u.Attr(name)
	if !ok {
		return 0, false, nil
	}
	digits, base := v, 10
	if h, isHex := cutPrefixFold(v, "0x"); isHex {
		digits, base = h, 16
	}
	n, perr := strconv.ParseUint(digits, base, 64)
	inQuery := slices.ContainsFunc(u.Query, func(a URIAttr) bool { return a.Name == name })
	if perr != nil || digits == "" || digits[0] == '+' {
		if inQuery { // query text is never quoted
			return 0, true, u.Errorf(name, "is not a decimal or 0x-hex number")
		}
		return 0, true, u.Errorf(name, "%q is not a decimal or 0x-hex number", truncate(v))
	}
	if n > max {
		if inQuery {
			return 0, true, u.Errorf(name, "is more than %d", max)
		}
		return 0, true, u.Errorf(name, "%d is more than %d", n, max)
	}
	return n, true, nil
}

// Secret returns the Secret that u's pin-source or pin-value gives, or nil
// when it has neither. Both at once is an error.
func (u *URI) Secret() (Secret, error) {
	src, hasSource := u.Attr(AttrPINSource)
	val, hasValue := u.Attr(AttrPINValue)
	switch {
	case hasSource && hasValue:
		return nil, &URIError{Scheme: u.Scheme, Attr: AttrPINValue, Problem: "given with pin-source: use one"}
	case hasValue:
		return SecretBytes([]byte(val)), nil
	case hasSource:
		s, err := SecretSource(src)
		if err != nil {
			return nil, &URIError{Scheme: u.Scheme, Attr: AttrPINSource, Problem: strings.TrimPrefix(err.Error(), "signer: "), Unsupported: errors.Is(err, ErrUnsupported)}
		}
		return s, nil
	}
	return nil, nil
}

// Errorf returns a *URIError for u's attribute name.
func (u *URI) Errorf(name, format string, args ...any) *URIError {
	return &URIError{Scheme: u.Scheme, Attr: name, Problem: fmt.Sprintf(format, args...)}
}

// String returns u in its written form, values escaped where needed,
// without pin-value.
func (u *URI) String() string {
	var b strings.Builder
	b.WriteString(u.Scheme + ":")
	write := func(attrs []URIAttr, sep string) {
		first := true
		for _, a := range attrs {
			if a.Name == AttrPINValue {
				continue
			}
			if !first {
				b.WriteString(sep)
			}
			first = false
			b.WriteString(a.Name + "=" + escapeValue(a.Value))
		}
	}
	write(u.Path, ";")
	var q []URIAttr
	for _, a := range u.Query {
		if a.Name != AttrPINValue {
			q = append(q, a)
		}
	}
	if len(q) > 0 {
		b.WriteString("?")
		write(q, "&")
	}
	return b.String()
}

// escapeValue percent-encodes all but RFC 3986 unreserved characters and
// the few that never separate anything here.
func escapeValue(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~:/@!$'()*+,=[]", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// redacted replaces the value of pin-value when a URI or attribute is
// formatted.
const redacted = "<redacted>"

// Format formats u for every fmt verb without pin-value's value: %v and %s
// print String, %q quotes it, %+v prints the fields and %#v Go syntax,
// with the value of pin-value replaced by <redacted>.
func (u URI) Format(f fmt.State, verb rune) {
	switch {
	case verb == 'v' && f.Flag('#'):
		io.WriteString(f, u.GoString())
	case verb == 'v' && f.Flag('+'):
		fmt.Fprintf(f, "%+v", uriFields(u))
	default:
		fmt.Fprintf(f, fmt.FormatString(f, verb), u.String())
	}
}

// uriFields is URI without its methods, for printing its fields (whose
// URIAttr values redact themselves).
type uriFields URI

// GoString returns u in Go syntax, the value of pin-value replaced by
// <redacted>.
func (u URI) GoString() string {
	return "signer.URI" + strings.TrimPrefix(fmt.Sprintf("%#v", uriFields(u)), "signer.uriFields")
}

// Format formats a for every fmt verb as the struct it is, except that the
// value of a pin-value attribute is replaced by <redacted>.
func (a URIAttr) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		io.WriteString(f, a.GoString())
		return
	}
	fmt.Fprintf(f, fmt.FormatString(f, verb), uriAttrFields(a.redact()))
}

type uriAttrFields URIAttr

func (a URIAttr) redact() URIAttr {
	if a.Name == AttrPINValue {
		a.Value = redacted
	}
	return a
}

// GoString returns a in Go syntax, the value of a pin-value attribute
// replaced by <redacted>.
func (a URIAttr) GoString() string {
	return "signer.URIAttr" + strings.TrimPrefix(fmt.Sprintf("%#v", uriAttrFields(a.redact())), "signer.uriAttrFields")
}
