package keybase_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/signerkit/signerkit/keybase"
	"github.com/signerkit/signerkit/signer"
)

// FuzzParseURI feeds ParseURI URIs with a pin-value between fuzzed text,
// escaped and raw: it never panics, and no error shows the PIN's value or
// a piece of it. A piece of the PIN in an error could also be fixed text
// (a PIN of "label"), so each URI is parsed twice, with the PIN and with
// another of the same shape (letters and digits moved along, within hex
// digits where they are hex, everything else kept): a piece of the PIN
// that shows in one error and not in the other came from the PIN.
func FuzzParseURI(f *testing.F) {
	for _, seed := range [][3]string{
		{"keybase:dir=/k;label=v?", "hunter2", ""},
		{"keybase:dir=/k;label=v?", "abc", "&mode=per-sign"},
		{"keybase:dir=/k;label=v?", "a&b=c", "&bogus=1"},
		{"keybase:dir=/k;label=v?", "s3cr3t", "&mode=fast"},
		{"keybase:dir=/k;label=v?pin-source=env:X&", "pin", ""},
		{"keybase:dir=/k;label=v;", "pin;label=x", ""},
		{"keybase:dir=/k?", "p%zzq", ";label=v"},
		{"keybase:", "x", "?mode=per-sign"},
		{"keybase:dir=/k;label=v?mode=", "per-sign&", ""},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Fuzz(func(t *testing.T, head, pin, tail string) {
		if len(pin) > 64 || !startsAttribute(head) {
			return
		}
		for _, escape := range []bool{true, false} {
			// Escaped, the whole PIN is the attribute's value. Raw, the
			// value ends at the first separator, and what follows is read
			// as further attributes, whose names an error may give (one
			// given twice): that part is kept as it is in both URIs.
			value, rest := pin, ""
			if i := strings.IndexAny(pin, ";&?"); !escape && i >= 0 {
				value, rest = pin[:i], pin[i:]
			}
			uri := func(v string) string {
				if escape {
					v = escapeAll(v)
				}
				return head + "pin-value=" + v + rest + tail
			}
			other := shift(value)
			cfg, errA := keybase.ParseURI(uri(value))
			_, errB := keybase.ParseURI(uri(other))
			if (errA == nil) != (errB == nil) {
				t.Fatalf("escape %v: the PIN's value decided whether the URI parses: %v / %v", escape, errA, errB)
			}
			if errA == nil {
				// The Secret is the pin-value the URI holds.
				u, err := signer.ParseURI(uri(value))
				if err != nil {
					t.Fatalf("keybase.ParseURI takes what signer.ParseURI refuses: %v", err)
				}
				if v, ok := u.Attr(signer.AttrPINValue); ok {
					if cfg.Secret == nil {
						t.Fatal("no Secret from pin-value")
					}
					if got, err := cfg.Secret(); err != nil || string(got) != v {
						t.Fatalf("secret %q, %v; want %q", got, err, v)
					}
				}
				continue
			}
			if p := leaked(errA.Error(), errB.Error(), value); p != "" {
				t.Fatalf("escape %v: error %q shows %q of the PIN %q", escape, errA, p, value)
			}
			if p := leaked(errB.Error(), errA.Error(), other); p != "" {
				t.Fatalf("escape %v: error %q shows %q of the PIN %q", escape, errB, p, other)
			}
		}
	})
}

// startsAttribute reports whether text after head starts an attribute:
// head ends with the scheme's ':' or a path ';', or with the '?' that
// starts the query or a '&' in it.
func startsAttribute(head string) bool {
	i := strings.IndexByte(head, ':')
	if i < 0 {
		return false
	}
	rest := head[i+1:]
	if q := strings.IndexByte(rest, '?'); q >= 0 {
		return q == len(rest)-1 || strings.HasSuffix(rest, "&")
	}
	return rest == "" || strings.HasSuffix(rest, ";")
}

// leaked returns a piece of pin, 4 bytes or longer, that shows in msg and
// not in other (the error for another PIN), or "".
func leaked(msg, other, pin string) string {
	const min = 4
	for n := len(pin); n >= min; n-- {
		for i := 0; i+n <= len(pin); i++ {
			if p := pin[i : i+n]; strings.Contains(msg, p) && !strings.Contains(other, p) {
				return p
			}
		}
	}
	return ""
}

// escapeAll percent-encodes every byte of s.
func escapeAll(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, "%%%02X", s[i])
	}
	return b.String()
}

// shift moves each letter and digit of s to the next within its class
// (a–f, g–z, A–F, G–Z, 0–9), keeping hex digits hex, so a URI with
// shift(s) in place of s parses the same way wherever s splits it.
func shift(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case 'a' <= c && c <= 'f':
			b[i] = 'a' + (c-'a'+1)%6
		case 'g' <= c && c <= 'z':
			b[i] = 'g' + (c-'g'+1)%20
		case 'A' <= c && c <= 'F':
			b[i] = 'A' + (c-'A'+1)%6
		case 'G' <= c && c <= 'Z':
			b[i] = 'G' + (c-'G'+1)%20
		case '0' <= c && c <= '9':
			b[i] = '0' + (c-'0'+1)%10
		}
	}
	return string(b)
}
