package keybase

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signerkit/signerkit/signer"
)

// gnokeyNames are names gnokey v1.7.1 takes (`gnokey add` any argument,
// `gnokey import` any non-empty one) that are no file names.
var gnokeyNames = []string{
	"my key",          // space
	"validator/1",     // slash
	".hidden",         // leading dot
	"-flag", "_under", // leading '-' and '_'
	"clé", "ключ", "鍵", // non-ASCII
	"a\u202eyek",      // bidi override
	"key\n", "a\x00b", // control characters
	"50%", "a:b", "a@b", "%41", // other punctuation, and what looks escaped
	strings.Repeat("k", 101),                   // over the 100 bytes of a plain name
	strings.Repeat("鍵", 300),                   // 900 bytes, a hashed file name
	"g1jg8mtutu9khhfwc4nxmuhcpftf0pajdhfvsqf5", // a bech32 address no key has
}

// TestGnokeyNames: every name gnokey takes (but the empty one) imports,
// lists as itself, opens by name and signs.
func TestGnokeyNames(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	priv := ed25519.NewKeyFromSeed([]byte("gnokey names test seed 32 bytes!"))
	armor, err := EncryptArmor(ctx, priv, []byte("correct horse battery staple"), testCost)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range gnokeyNames {
		if _, err := s.ImportArmor(ctx, armor, name); err != nil {
			t.Errorf("ImportArmor(%q): %v", name, err)
		}
	}
	if _, err := s.ImportArmor(ctx, armor, ""); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("ImportArmor of the empty name: %v", err)
	}
	keys, err := s.ListKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, k := range keys {
		listed[k.Label] = true
	}
	msg := []byte("vote")
	for _, name := range gnokeyNames {
		if !listed[name] {
			t.Errorf("ListKeys leaves out %q", name)
			continue
		}
		sg, err := s.OpenKey(ctx, signer.KeyRef{Label: name})
		if err != nil {
			t.Errorf("OpenKey(%q): %v", name, err)
			continue
		}
		sig, err := sg.SignContext(ctx, msg)
		if err != nil || !ed25519.Verify(priv.Public().(ed25519.PublicKey), msg, sig) {
			t.Errorf("sign under %q: %v", name, err)
		}
		sg.Close()
		if got, err := s.ExportArmor(ctx, name); err != nil || !bytes.Equal(got, armor) {
			t.Errorf("ExportArmor(%q): %v", name, err)
		}
	}
	if len(keys) != len(gnokeyNames) {
		t.Errorf("ListKeys: %d keys, want %d", len(keys), len(gnokeyNames))
	}
}

// TestKeyFileName pins the documented mapping of names to file names.
func TestKeyFileName(t *testing.T) {
	for name, want := range map[string]string{
		"validator":            "validator.key",
		"node-1.validator_key": "node-1.validator_key.key",
		"my key/1":             "my%20key%2F1.key",
		".hidden":              "%2Ehidden.key",
		"..":                   "%2E..key",
		"clé":                  "cl%C3%A9.key",
		"50%":                  "50%25.key",
		"%41":                  "%2541.key",
		"a~b":                  "a%7Eb.key",
	} {
		if got, err := KeyFileName(name); err != nil || got != want {
			t.Errorf("KeyFileName(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
	long, _ := KeyFileName(strings.Repeat("鍵", 300))
	if len(long) > 204 || !strings.Contains(long, "%~") {
		t.Errorf("a 900-byte name's file name: %q", long)
	}
	// No two names share a file, and the stem of each reads back.
	seen := map[string]string{}
	for _, name := range append(gnokeyNames, "validator", "a%2Fb", "a/b", "A/b", "a%2fb") {
		stem := fileStem(name)
		if other, dup := seen[stem]; dup {
			t.Errorf("%q and %q share the file %q", name, other, stem)
		}
		seen[stem] = name
		back, hashed, ok := nameOfStem(stem)
		if !ok || !hashed && back != name {
			t.Errorf("nameOfStem(%q) = %q, %v, %v; want %q", stem, back, hashed, ok, name)
		}
	}
	// File names KeyFileName never gives are no key's.
	for _, stem := range []string{"a%2fb", "%41", "a%2", "%00%", ".x", "a b", "a%~xyz"} {
		if _, _, ok := nameOfStem(stem); ok {
			t.Errorf("nameOfStem(%q) takes it", stem)
		}
	}
}

// TestPlainNameFiles: a key of a name that is its own file name is
// written as before names were escaped (no name header), so files that
// earlier versions wrote, and that they read, are the same.
func TestPlainNameFiles(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	if _, err := s.GenerateKey(ctx, signer.Ed25519, "validator"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GenerateKey(ctx, signer.Ed25519, "my key"); err != nil {
		t.Fatal(err)
	}
	plain, err := os.ReadFile(filepath.Join(s.Dir(), "validator.key"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(plain, []byte("-----BEGIN TENDERMINT PUBLIC KEY-----\ntype: Info\nversion: 0.0.0\n\n")) {
		t.Errorf("the file of a plain name:\n%s", plain)
	}
	odd, err := os.ReadFile(filepath.Join(s.Dir(), "my%20key.key"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(odd, []byte("\nname: my%20key\n")) {
		t.Errorf("the file of \"my key\" has no name header:\n%s", odd)
	}

	// A file renamed by hand to another name's file holds that other
	// key: it is reported, not opened as the name its file name gives.
	if err := os.Rename(filepath.Join(s.Dir(), "my%20key.key"), filepath.Join(s.Dir(), "other%20key.key")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.KeyInfo(ctx, "other key"); !errors.Is(err, signer.ErrCorrupt) {
		t.Errorf("KeyInfo of a renamed file: %v, want ErrCorrupt", err)
	}
	if _, err := s.KeyInfo(ctx, "my key"); !errors.Is(err, signer.ErrKeyNotFound) {
		t.Errorf("KeyInfo of the name whose file went: %v", err)
	}
}

// FuzzKeyFileName: every name CheckName takes maps to a file name in the
// directory that reads back as the name (or, shortened, as a hashed
// one); every file name nameOfStem takes is the one its name maps to.
func FuzzKeyFileName(f *testing.F) {
	for _, n := range gnokeyNames {
		f.Add(n)
		f.Add(fileStem(n))
	}
	f.Add("a%2fb")
	f.Add("%~")
	f.Fuzz(func(t *testing.T, s string) {
		if CheckName(s) == nil {
			stem := fileStem(s)
			if stem == "" || len(stem) > maxStem || strings.ContainsAny(stem, "/\\\x00") || stem[0] == '.' || stem == "." || stem == ".." {
				t.Fatalf("name %q: file name %q", s, stem)
			}
			back, hashed, ok := nameOfStem(stem)
			if !ok || !hashed && back != s || hashed && len(escapeName(s)) <= maxStem {
				t.Fatalf("name %q: file name %q reads back as %q, %v, %v", s, stem, back, hashed, ok)
			}
		}
		if name, hashed, ok := nameOfStem(s); ok && !hashed && fileStem(name) != s {
			t.Fatalf("file name %q reads as %q, whose file name is %q", s, name, fileStem(name))
		}
		if name, ok := unescapeName(s); ok && escapeName(name) != s {
			t.Fatalf("%q unescapes to %q, which escapes to %q", s, name, escapeName(name))
		}
	})
}
