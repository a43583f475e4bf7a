// Package tomlline finds where in a TOML file an error is: the line of a
// parse error, and the line of a key the decoder left undecoded (a
// misspelt key), which the toml package records but does not export.
package tomlline

import (
	"bytes"
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// typeError is how the decoder words an error it finds putting a value
// into its destination (a string where an integer goes, say): a plain
// error, not a toml.ParseError, with the line and key only in its text.
var typeError = regexp.MustCompile(`^toml: (?:line (\d+) )?\(last key "((?:[^"\\]|\\.)*)"\): (.+)$`)

// ParseError returns err's line, last key and message when err is a
// toml.ParseError or the decoder's error for a value of the wrong type,
// and ok false otherwise. The line of a ParseError is taken from its
// byte offset where it has one: the line number the parser gives may be
// the next line for an error at a line's end.
func ParseError(data []byte, err error) (line int, key, msg string, ok bool) {
	var pe toml.ParseError
	if !errors.As(err, &pe) {
		m := typeError.FindStringSubmatch(err.Error())
		if m == nil {
			return 0, "", "", false
		}
		line, _ = strconv.Atoi(m[1])
		return line, m[2], m[3], true
	}
	line = pe.Position.Line
	if st := pe.Position.Start; st > 0 && st <= len(data) {
		line = bytes.Count(data[:st], []byte("\n")) + 1
	}
	return line, pe.LastKey, pe.Message, true
}

// KeyLine finds the line where key, left undecoded by a decoding into
// the value probe returns, is defined: the first prefix of the file, by
// whole lines, whose decoding into a new probe() leaves key undecoded ends
// on the key's line, or on the last line of its value when the value
// spans lines; the key's line is then the nearest one at or above that
// names the key's last part. It returns 0 if not found.
func KeyLine(data []byte, key toml.Key, probe func() any) int {
	if len(key) == 0 {
		return 0
	}
	lines := strings.SplitAfter(string(data), "\n")
	want := key.String()
	last := key[len(key)-1]
	var prefix strings.Builder
	for n, l := range lines {
		prefix.WriteString(l)
		md, err := toml.Decode(prefix.String(), probe())
		if err != nil {
			continue
		}
		if !slices.ContainsFunc(md.Undecoded(), func(k toml.Key) bool { return k.String() == want }) {
			continue
		}
		for i := n; i >= 0; i-- {
			if strings.Contains(lines[i], last) {
				return i + 1
			}
		}
		return n + 1
	}
	return 0
}
