package keybase

import (
	"context"
	"crypto/ed25519"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/signerkit/signerkit/signer"
)

// TestGnokeyNames: gnokey v1.7.1 accepts any key name (`gnokey add` any
// argument, `gnokey import` any non-empty one). Each such name this
// package refuses is refused on import with signer.ErrInvalidArgument and
// an error stating the rule, writes nothing, and the same key imports
// under a name that passes CheckName and signs.
func TestGnokeyNames(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	priv := ed25519.NewKeyFromSeed([]byte("gnokey names test seed 32 bytes!"))
	armor, err := EncryptArmor(ctx, priv, []byte("correct horse battery staple"), testCost)
	if err != nil {
		t.Fatal(err)
	}
	gnokeyNames := []string{
		"",                // gnokey add accepts it, import does not
		"my key",          // space
		"validator/1",     // slash
		".hidden",         // leading dot
		"-flag", "_under", // leading '-' and '_'
		"clé", "ключ", "鍵", // non-ASCII
		"a\u202eyek",      // bidi override
		"key\n", "a\x00b", // control characters
		"50%", "a:b", "a@b", // other punctuation
		strings.Repeat("k", 101), // over MaxName
		strings.Repeat("k", 300),
		"g1jg8mtutu9khhfwc4nxmuhcpftf0pajdhfvsqf5", // a bech32 address
	}
	for _, name := range gnokeyNames {
		if name == "g1jg8mtutu9khhfwc4nxmuhcpftf0pajdhfvsqf5" {
			// Passes CheckName: gnokey looks such a name up as an
			// address, this package as an address, then as a name.
			if err := CheckName(name); err != nil {
				t.Errorf("CheckName(%q): %v", name, err)
			}
			continue
		}
		_, err := s.ImportArmor(ctx, armor, name)
		if !errors.Is(err, signer.ErrInvalidArgument) {
			t.Errorf("ImportArmor(%q): got %v, want ErrInvalidArgument", name, err)
			continue
		}
		if !strings.Contains(err.Error(), "want 1 to 100 of A-Z a-z 0-9 . _ -, starting with a letter or digit") {
			t.Errorf("ImportArmor(%q): %q does not state the rule", name, err)
		}
		if _, err := s.ImportKey(ctx, priv, 0, name); !errors.Is(err, signer.ErrInvalidArgument) {
			t.Errorf("ImportKey(%q): got %v, want ErrInvalidArgument", name, err)
		}
	}
	if _, err := os.Stat(s.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("refused names created the store: %v", err)
	}

	// The armor carries no name: the key imports under a safe one.
	if _, err := s.ImportArmor(ctx, armor, "my-key"); err != nil {
		t.Fatal(err)
	}
	keys, err := s.ListKeys(ctx)
	if err != nil || len(keys) != 1 || keys[0].Label != "my-key" {
		t.Fatalf("ListKeys = %v, %v", keys, err)
	}
	sg, err := s.OpenKey(ctx, signer.KeyRef{Label: "my-key"})
	if err != nil {
		t.Fatal(err)
	}
	defer sg.Close()
	msg := []byte("vote")
	sig, err := sg.SignContext(ctx, msg)
	if err != nil || !ed25519.Verify(priv.Public().(ed25519.PublicKey), msg, sig) {
		t.Errorf("sign under the safe name: %v", err)
	}
}
