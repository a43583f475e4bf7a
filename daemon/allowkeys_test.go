package daemon

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signerkit/signerkit/keyfmt"
)

// TestAllowFormats: allow takes a node's key as gno prints it (gpub1…),
// as ed25519:<hex|base64>, and as the path of its node_key.json,
// CometBFT's or gno's; a bad entry's error names the entry and what was
// wrong with it.
func TestAllowFormats(t *testing.T) {
	dir := t.TempDir()
	var want []ed25519.PublicKey
	var allow []string
	for i := range 6 {
		pub, priv, _ := ed25519.GenerateKey(nil)
		want = append(want, pub)
		b64 := base64.StdEncoding.EncodeToString(priv)
		switch i {
		case 0:
			allow = append(allow, keyfmt.GnoPubKey(pub))
		case 1:
			allow = append(allow, "ed25519:"+hex.EncodeToString(pub))
		case 2:
			allow = append(allow, "ed25519:"+base64.StdEncoding.EncodeToString(pub))
		case 3:
			allow = append(allow, strings.ToUpper(hex.EncodeToString(pub)))
		case 4:
			p := filepath.Join(dir, "cometbft_node_key.json")
			writeTestFile(t, p, `{"priv_key":{"type":"tendermint/PrivKeyEd25519","value":"`+b64+`"}}`)
			allow = append(allow, p)
		case 5:
			p := filepath.Join(dir, "gno_node_key.json")
			writeTestFile(t, p, `{"priv_key":"`+b64+`"}`)
			allow = append(allow, p)
		}
	}
	cfg := fmt.Sprintf("state_dir = %q\nidentity_key = \"/x\"\n[[chain]]\nid = \"c\"\nprotocol = \"tm2-remote\"\nkey = \"ledger:\"\n"+
		"  [[chain.validator]]\n  addr = \"tcp://127.0.0.1:1\"\n  allow = [%s]\n", dir, quoteAll(allow))
	c, err := ParseConfig([]byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Chains[0].Validators[0].AllowKeys()
	if err != nil || len(got) != len(want) {
		t.Fatalf("AllowKeys = %d keys, %v", len(got), err)
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("entry %d (%s): %x, want %x", i+1, allow[i], got[i], want[i])
		}
	}

	bad := filepath.Join(dir, "bad_node_key.json")
	writeTestFile(t, bad, `{"priv_key":"AAAA"}`)
	for _, c := range []struct{ entry, want string }{
		{"gpub1qqqq", "not a bech32 string"},
		{"ed25519:abcd", "4 hex digits"},
		{keyfmt.GnoAddress(want[0]), "a gno address, not a public key"},
		{bad, "3 bytes, want 64"},
		{filepath.Join(dir, "missing.json"), "no such node_key.json"},
	} {
		v := ValidatorConfig{Addr: "tcp://127.0.0.1:1", Allow: []string{allow[0], c.entry}}
		_, err := v.AllowKeys()
		if err == nil || !strings.Contains(err.Error(), "entry 2") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("allow %q: %v, want entry 2 and %q", c.entry, err, c.want)
		}
		if c.entry != bad && !strings.Contains(c.entry, "missing") && !errors.Is(err, keyfmt.ErrFormat) {
			t.Errorf("allow %q: %v does not wrap keyfmt.ErrFormat", c.entry, err)
		}
	}
}

func writeTestFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}
