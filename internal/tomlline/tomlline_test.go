package tomlline_test

import (
	"fmt"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/signerkit/signerkit/internal/tomlline"
)

type conf struct {
	Name  string `toml:"name"`
	Count int    `toml:"count"`
	Table []struct {
		ID int `toml:"id"`
	} `toml:"table"`
}

// TestLines: the line and key of a syntax error, a value of the wrong
// type, and a key the struct does not have, each found by its own path.
func TestLines(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		line       int
		key        string
	}{
		{"syntax", "name = \"a\"\ncount = \n", 2, "count"},
		{"type", "name = \"a\"\n\n[[table]]\nid = \"x\"\n", 4, "table.id"},
		{"unknown", "name = \"a\"\n[[table]]\nid = 1\nidd = 2\n", 4, "table.idd"},
		{"unknown, multi-line value", "name = \"a\"\nextra = [\n 1,\n 2,\n]\n", 2, "extra"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c conf
			md, err := toml.Decode(tc.data, &c)
			var line int
			var key string
			if err != nil {
				var ok bool
				if line, key, _, ok = tomlline.ParseError([]byte(tc.data), err); !ok {
					t.Fatalf("%v: not located", err)
				}
			} else if und := md.Undecoded(); len(und) > 0 {
				key = und[0].String()
				line = tomlline.KeyLine([]byte(tc.data), und[0], func() any { return new(conf) })
			}
			if line != tc.line || key != tc.key {
				t.Fatalf("line %d, key %q; want %d, %q", line, key, tc.line, tc.key)
			}
		})
	}
}

// FuzzParseError: no error text makes ParseError panic.
func FuzzParseError(f *testing.F) {
	f.Add("count = \n")
	f.Add("[[table]]\nid = \"x\"\n")
	f.Add("a = [\n")
	f.Fuzz(func(t *testing.T, s string) {
		var c conf
		if _, err := toml.Decode(s, &c); err != nil {
			tomlline.ParseError([]byte(s), err)
		}
	})
}

func ExampleKeyLine() {
	data := []byte("name = \"a\"\ncuont = 3\n")
	var c conf
	md, _ := toml.Decode(string(data), &c)
	k := md.Undecoded()[0]
	fmt.Println(k.String(), "on line", tomlline.KeyLine(data, k, func() any { return new(conf) }))
	// Output: cuont on line 2
}
