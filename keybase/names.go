package keybase

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/signerkit/signerkit/signer"
)

// MaxName is the longest key name, in bytes. gnokey sets no limit; this
// one bounds what a listing shows.
const MaxName = 1024

// maxStem bounds the file name a key name maps to, before ".key": with
// the temporary files' ".<stem>.tmp-<16 hex digits>" it stays under the 255
// bytes most file systems allow.
const maxStem = 200

// hashMark separates a long name's shortened escape from its hash in a
// file name; escapeName never writes it ('~' is escaped).
const hashMark = "%~"

// CheckName reports whether name can name a key: any string of 1 to
// MaxName bytes, as gnokey (which checks no name) takes. A name that is
// not a safe file name is stored under one that KeyFileName gives. The
// empty name, which `gnokey add` takes, is refused (a signer.KeyRef needs
// a label), as is a longer one, with an error wrapping
// signer.ErrInvalidArgument.
func CheckName(name string) error {
	if name == "" || len(name) > MaxName {
		return fmt.Errorf("keybase: key name of %d bytes: want 1 to %d: %w", len(name), MaxName, signer.ErrInvalidArgument)
	}
	return nil
}

// plainName reports whether name is its own file name: 1 to 100 ASCII
// letters, digits, '.', '_' and '-', starting with a letter or digit (the
// only names earlier versions of this package took).
func plainName(name string) bool {
	if name == "" || len(name) > 100 {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !plainByte(name[i], i) {
			return false
		}
	}
	return true
}

func plainByte(c byte, i int) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	case c == '.' || c == '_' || c == '-':
		return i > 0
	}
	return false
}

// KeyFileName returns the name of the file, in a Store's directory, that
// holds the key of name: "<name>.key" for a name of ASCII letters, digits,
// '.', '_' and '-' that starts with a letter or digit (at most 100
// bytes); for any other name, "<escaped>.key", where each byte of the
// name outside that set (and a leading '.', '_' or '-') is written %XX in
// upper-case hex: "my key/1" is "my%20key%2F1.key", ".hidden" is
// "%2Ehidden.key", "clé" is "cl%C3%A9.key". An escaped name over 200
// bytes is cut (never inside a %XX) and followed by "%~" and 32 hex
// digits of the name's SHA-256. So no name reaches outside the directory
// or onto the store's own files (which start with '.'), and two names
// never share a file. The file of a name that is not its own file name
// also carries the name itself (a "name" header in its public key block),
// so ListKeys shows the name, not the file's.
func KeyFileName(name string) (string, error) {
	if err := CheckName(name); err != nil {
		return "", err
	}
	return fileStem(name) + keySuffix, nil
}

// fileStem is KeyFileName without ".key", for a name CheckName takes.
func fileStem(name string) string {
	if plainName(name) {
		return name
	}
	esc := escapeName(name)
	if len(esc) <= maxStem {
		return esc
	}
	cut := maxStem - len(hashMark) - 32
	if i := strings.LastIndexByte(esc[cut-2:cut], '%'); i >= 0 {
		cut = cut - 2 + i // not inside a %XX
	}
	sum := sha256.Sum256([]byte(name))
	return esc[:cut] + hashMark + hex.EncodeToString(sum[:16])
}

// escapeName writes each byte of name that plainByte refuses as %XX.
func escapeName(name string) string {
	const digits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		if plainByte(c, i) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(digits[c>>4])
		b.WriteByte(digits[c&15])
	}
	return b.String()
}

// unescapeName reads what escapeName wrote, and only that (upper-case
// hex, every byte plainByte refuses escaped and no other), so a name has
// one escape.
func unescapeName(esc string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(esc); i++ {
		c := esc[i]
		if c != '%' {
			if !plainByte(c, b.Len()) {
				return "", false
			}
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(esc) {
			return "", false
		}
		hi, ok1 := upperHex(esc[i+1])
		lo, ok2 := upperHex(esc[i+2])
		d := hi<<4 | lo
		if !ok1 || !ok2 || plainByte(d, b.Len()) {
			return "", false
		}
		b.WriteByte(d)
		i += 2
	}
	return b.String(), b.Len() > 0
}

func upperHex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// nameOfStem returns the name a file name (without ".key") gives: the
// name itself, or the escaped name decoded. hashed is set for a long
// name's shortened form, whose name only its file's header gives. ok is
// false for a file name KeyFileName never gives.
func nameOfStem(stem string) (name string, hashed, ok bool) {
	if plainName(stem) {
		return stem, false, true
	}
	if i := strings.Index(stem, hashMark); i >= 0 {
		h := stem[i+len(hashMark):]
		if _, err := hex.DecodeString(h); err != nil || len(h) != 32 || strings.ToLower(h) != h {
			return "", false, false
		}
		return "", true, true
	}
	name, ok = unescapeName(stem)
	if !ok || fileStem(name) != stem {
		return "", false, false
	}
	return name, false, true
}
