package main

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/keyfmt"
)

// TestIdentityShowFor: -for prints the one value a gno node lists (the
// identity as ed25519:<hex> for tm2-tmkms, gpub1… for tm2-remote),
// computed here from the identity file with keyfmt and encoding/hex; a
// CometBFT protocol, which pins no signer, and an unknown one are refused.
func TestIdentityShowFor(t *testing.T) {
	home := filepath.Join(t.TempDir(), "sk")
	var out, errOut bytes.Buffer
	if err := cmdInit([]string{"-home", home, "-chain", "c", "-protocol", "tm2-tmkms", "-validator", "tcp://127.0.0.1:1", "-allow-any"}, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	s, err := inprocess.Open(t.Context(), inprocess.Config{File: filepath.Join(home, "identity.pem")})
	if err != nil {
		t.Fatal(err)
	}
	pub := s.Public().(ed25519.PublicKey)
	_ = s.Close()
	cfg := filepath.Join(home, "signerkit.toml")
	for proto, want := range map[string]string{
		"tm2-tmkms":  "ed25519:" + hex.EncodeToString(pub),
		"tm2-remote": keyfmt.GnoPubKey(pub),
	} {
		out.Reset()
		if err := cmdIdentity([]string{"show", "-config", cfg, "-for", proto}, &out, &errOut); err != nil {
			t.Fatalf("%s: %v", proto, err)
		}
		if out.String() != want+"\n" {
			t.Errorf("-for %s: %q, want %q", proto, out.String(), want)
		}
	}
	for proto, want := range map[string]string{"cometbft-v0.38": "pins no signer key", "tm3": "not a protocol"} {
		out.Reset()
		err := cmdIdentity([]string{"show", "-config", cfg, "-for", proto}, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), want) || out.Len() != 0 {
			t.Errorf("-for %s: %v, printed %q", proto, err, out.String())
		}
	}
}
