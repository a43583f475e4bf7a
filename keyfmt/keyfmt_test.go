package keyfmt

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The key of seed SHA-256("x"), and what gno v1.7.1 and CometBFT v0.38
// print for it (interop's TestKeyFormats checks the same against their
// code for random keys).
var (
	vecSeed = sha256.Sum256([]byte("x"))
	vecPub  = ed25519.NewKeyFromSeed(vecSeed[:]).Public().(ed25519.PublicKey)
)

const (
	vecGpub   = "gpub1pggj7ard9eg82cjtv4u52epjx56nzwgjyg9zpnvh0wm2gkh9pfkr08epm7aj0u54h4um0ekatwa3seg69tsqfkugg7zc70"
	vecAmino  = "0a112f746d2e5075624b65794564323535313912220a20cd977bb6a45ae50a6c379f21dfbb27f295bd79b7e6dd5bbb18651a2ae004db88"
	vecGnoAdr = "g1zr94uyyy57pxw80fw7uqjl6kq6mjdyvlm0q3sa"
	vecCmtAdr = "10CB5E1084A782671DE977B8097F5606B726919F"
	vecPriv   = "LXEWQrcmsEQBYnyp+6wy9chTD7GQPMTbAiWHF5IaSIHNl3u2pFrlCmw3nyHfuyfylb15t+bdW7sYZRoq4ATbiA=="
)

func TestVectors(t *testing.T) {
	if got := hex.EncodeToString(GnoAmino(vecPub)); got != vecAmino {
		t.Errorf("GnoAmino = %s, want %s", got, vecAmino)
	}
	if got := GnoPubKey(vecPub); got != vecGpub {
		t.Errorf("GnoPubKey = %s, want %s", got, vecGpub)
	}
	if got := GnoAddress(vecPub); got != vecGnoAdr {
		t.Errorf("GnoAddress = %s", got)
	}
	if got := CometBFTAddress(vecPub); got != vecCmtAdr {
		t.Errorf("CometBFTAddress = %s", got)
	}
}

func TestParsePublicKey(t *testing.T) {
	h := hex.EncodeToString(vecPub)
	b := base64.StdEncoding.EncodeToString(vecPub)
	for _, s := range []string{vecGpub, strings.ToUpper(vecGpub), "ed25519:" + h, "ed25519:" + strings.ToUpper(h),
		"ed25519:" + b, h, strings.ToUpper(h), b, "  " + h + "\n"} {
		got, err := ParsePublicKey(s)
		if err != nil || !bytes.Equal(got, vecPub) {
			t.Errorf("ParsePublicKey(%q) = %x, %v", s, got, err)
		}
	}
}

func TestParsePublicKeyErrors(t *testing.T) {
	// A secp256k1 gpub, as gno writes one: amino Any of /tm.PubKeySecp256k1.
	secpAmino := append([]byte{0x0a, 19}, "/tm.PubKeySecp256k1"...)
	secpAmino = append(secpAmino, 0x12, 35, 0x0a, 33)
	secpAmino = append(secpAmino, bytes.Repeat([]byte{2}, 33)...)
	secp := mustBech32(t, GnoPubKeyPrefix, secpAmino)
	gAddr := GnoAddress(vecPub)
	flipped := []byte(vecGpub)
	flipped[20] ^= 'q' ^ 'p'
	for _, c := range []struct {
		in, want string
		notEd    bool
	}{
		{"", "empty", false},
		{"ed25519:", "empty", false},
		{"zz", "neither gpub1", false},
		{"ed25519:abcd", "4 hex digits", false},
		{strings.Repeat("ab", 33), "66 hex digits", false},
		{base64.StdEncoding.EncodeToString(make([]byte, 33)), "base64 of 33 bytes", false},
		{base64.StdEncoding.EncodeToString(make([]byte, 31)), "base64 of 31 bytes", false},
		{"secp256k1:" + hex.EncodeToString(vecPub), `algorithm "secp256k1"`, false},
		{secp, "/tm.PubKeySecp256k1", true},
		{string(flipped), "checksum", false},
		{gAddr, "a gno address", false},
		{mustBech32(t, "gpub", []byte{1, 2, 3}), "not an amino", false},
	} {
		_, err := ParsePublicKey(c.in)
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParsePublicKey(%q) = %v, want an *Error with %q", c.in, err, c.want)
		}
		if errors.Is(err, ErrNotEd25519) != c.notEd {
			t.Errorf("ParsePublicKey(%q): errors.Is(ErrNotEd25519) = %v", c.in, !c.notEd)
		}
	}
	if _, err := ParseGnoPubKey(mustBech32(t, "cosmospub", GnoAmino(vecPub))); err == nil || !strings.Contains(err.Error(), `prefix "cosmospub"`) {
		t.Errorf("another prefix: %v", err)
	}
}

func mustBech32(t *testing.T, hrp string, b []byte) string {
	t.Helper()
	s, err := bech32EncodeLong(hrp, b)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestParseNodeKey(t *testing.T) {
	for _, c := range []struct {
		json   string
		format NodeKeyFormat
	}{
		{`{"priv_key":{"type":"tendermint/PrivKeyEd25519","value":"` + vecPriv + `"}}`, CometBFTNodeKey},
		{`{"priv_key":"` + vecPriv + `"}`, GnoNodeKey},
		{`{"priv_key":{"@type":"/tm.PrivKeyEd25519","value":"` + vecPriv + `"}}`, GnoTypedNodeKey},
	} {
		pub, f, err := ParseNodeKey([]byte(c.json))
		if err != nil || f != c.format || !bytes.Equal(pub, vecPub) {
			t.Errorf("ParseNodeKey(%s) = %x, %v, %v", c.json, pub, f, err)
		}
	}
	raw, _ := base64.StdEncoding.DecodeString(vecPriv)
	raw[40] ^= 1
	badHalf := base64.StdEncoding.EncodeToString(raw)
	for _, c := range []struct{ json, want string }{
		{`{`, "not JSON"},
		{`{}`, `no "priv_key"`},
		{`{"priv_key":5}`, "priv_key"},
		{`{"priv_key":{"value":"` + vecPriv + `"}}`, `no "type"`},
		{`{"priv_key":{"type":"tendermint/PrivKeySecp256k1","value":"AA=="}}`, "PrivKeySecp256k1"},
		{`{"priv_key":{"@type":"/tm.PrivKeySecp256k1","value":"AA=="}}`, "PrivKeySecp256k1"},
		{`{"priv_key":"AAAA"}`, "3 bytes, want 64"},
		{`{"priv_key":"!!"}`, "not base64"},
		{`{"priv_key":"` + badHalf + `"}`, "damaged"},
	} {
		_, _, err := ParseNodeKey([]byte(c.json))
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseNodeKey(%s) = %v, want %q", c.json, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), vecPriv[:20]) {
			t.Errorf("ParseNodeKey's error shows the private key: %v", err)
		}
	}
}

func TestLoadNodeKey(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "node_key.json")
	if err := os.WriteFile(p, []byte(`{"priv_key":"`+vecPriv+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	pub, f, err := LoadNodeKey(p)
	if err != nil || f != GnoNodeKey || !bytes.Equal(pub, vecPub) {
		t.Fatalf("LoadNodeKey = %x, %v, %v", pub, f, err)
	}
	if err := os.WriteFile(p, []byte(`{"priv_key":"AAAA"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadNodeKey(p); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), p) {
		t.Errorf("a bad file's error = %v, want its path", err)
	}
	if err := os.WriteFile(p, bytes.Repeat([]byte(" "), MaxNodeKeySize+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadNodeKey(p); !errors.Is(err, ErrFormat) {
		t.Errorf("an oversized file: %v", err)
	}
	if _, _, err := LoadNodeKey(filepath.Join(dir, "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}

func TestGenesisValidator(t *testing.T) {
	var got map[string]any
	if err := json.Unmarshal(CometBFTGenesisValidator(vecPub, 10, "v").JSON(), &got); err != nil {
		t.Fatal(err)
	}
	pk := got["pub_key"].(map[string]any)
	if got["address"] != vecCmtAdr || got["power"] != "10" || got["name"] != "v" ||
		pk["type"] != CometBFTPubKeyType || pk["value"] != base64.StdEncoding.EncodeToString(vecPub) || pk["@type"] != nil {
		t.Errorf("CometBFT entry: %v", got)
	}
	got = nil
	if err := json.Unmarshal(GnoGenesisValidator(vecPub, 1, "n").JSON(), &got); err != nil {
		t.Fatal(err)
	}
	pk = got["pub_key"].(map[string]any)
	if got["address"] != vecGnoAdr || got["power"] != "1" || pk["@type"] != GnoPubKeyType || pk["type"] != nil {
		t.Errorf("gno entry: %v", got)
	}
}

// TestGnoSecp256k1PubKey: the gpub of a secp256k1 key is the amino Any
// of /tm.PubKeySecp256k1 that ParseGnoPubKey recognises (and refuses, as
// not Ed25519); interop's gno tests compare it with gno's own.
func TestGnoSecp256k1PubKey(t *testing.T) {
	key := append([]byte{3}, bytes.Repeat([]byte{7}, 32)...)
	s := GnoSecp256k1PubKey(key)
	if !strings.HasPrefix(s, "gpub1") {
		t.Fatalf("%q", s)
	}
	_, err := ParseGnoPubKey(s)
	if !errors.Is(err, ErrNotEd25519) || !strings.Contains(err.Error(), "/tm.PubKeySecp256k1") {
		t.Fatalf("ParseGnoPubKey(%s): %v", s, err)
	}
	if GnoSecp256k1PubKey(key[:32]) != "" {
		t.Fatal("a 32-byte key has a gpub")
	}
}
