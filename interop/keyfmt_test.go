package interop

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	cmted "github.com/cometbft/cometbft/crypto/ed25519"
	cmtjson "github.com/cometbft/cometbft/libs/json"
	cmtp2p "github.com/cometbft/cometbft/p2p"
	cmttypes "github.com/cometbft/cometbft/types"
	"github.com/gnolang/gno/tm2/pkg/amino"
	gnoprivval "github.com/gnolang/gno/tm2/pkg/bft/privval"
	rsclient "github.com/gnolang/gno/tm2/pkg/bft/privval/signer/remote/client"
	gnotypes "github.com/gnolang/gno/tm2/pkg/bft/types"
	gnocrypto "github.com/gnolang/gno/tm2/pkg/crypto"
	gnoed "github.com/gnolang/gno/tm2/pkg/crypto/ed25519"
	gnosecp "github.com/gnolang/gno/tm2/pkg/crypto/secp256k1"
	gnop2p "github.com/gnolang/gno/tm2/pkg/p2p/types"

	"github.com/signerkit/signerkit/keyfmt"
)

// TestKeyFormatsGno checks package keyfmt against gno v1.7.1's own code,
// for random keys: gpub1… both ways, the address, node_key.json as gno
// writes it, and the genesis validator entry byte for byte.
func TestKeyFormatsGno(t *testing.T) {
	for i := 0; i < 20; i++ {
		priv := gnoed.GenPrivKey()
		pub := priv.PubKey().(gnoed.PubKeyEd25519)
		std := ed25519.PublicKey(pub[:])
		if got, want := keyfmt.GnoAmino(std), pub.Bytes(); !bytes.Equal(got, want) {
			t.Fatalf("GnoAmino = %x, gno's Bytes %x", got, want)
		}
		if got, want := keyfmt.GnoPubKey(std), gnocrypto.PubKeyToBech32(pub); got != want {
			t.Fatalf("GnoPubKey = %s, gno's %s", got, want)
		}
		if got, want := keyfmt.GnoPubKey(std), pub.String(); got != want {
			t.Fatalf("GnoPubKey = %s, gno's String %s", got, want)
		}
		back, err := gnocrypto.PubKeyFromBech32(keyfmt.GnoPubKey(std))
		if err != nil || !back.Equals(pub) {
			t.Fatalf("gno reads our gpub as %v, %v", back, err)
		}
		parsed, err := keyfmt.ParsePublicKey(pub.String())
		if err != nil || !bytes.Equal(parsed, pub[:]) {
			t.Fatalf("ParsePublicKey(gno's %s) = %x, %v", pub.String(), parsed, err)
		}
		if got, want := keyfmt.GnoAddress(std), pub.Address().String(); got != want {
			t.Fatalf("GnoAddress = %s, gno's %s", got, want)
		}
		gv := gnotypes.GenesisValidator{Address: pub.Address(), PubKey: pub, Power: int64(i + 1), Name: "val"}
		want, err := amino.MarshalJSONIndent(gv, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if got := keyfmt.GnoGenesisValidator(std, int64(i+1), "val").JSON(); !bytes.Equal(got, want) {
			t.Fatalf("GnoGenesisValidator:\n%s\ngno's:\n%s", got, want)
		}
		var gv2 gnotypes.GenesisValidator
		if err := amino.UnmarshalJSON(keyfmt.GnoGenesisValidator(std, 7, "v").JSON(), &gv2); err != nil || !gv2.PubKey.Equals(pub) || gv2.Address != pub.Address() {
			t.Fatalf("gno reads our genesis entry as %+v, %v", gv2, err)
		}
	}
	// A secp256k1 gpub, as gno prints one, is refused as not Ed25519.
	secp := gnocrypto.PubKeyToBech32(gnosecp.GenPrivKey().PubKey())
	if _, err := keyfmt.ParsePublicKey(secp); !errors.Is(err, keyfmt.ErrNotEd25519) {
		t.Fatalf("ParsePublicKey(a secp256k1 gpub) = %v, want ErrNotEd25519", err)
	}
	// node_key.json as gnoland writes it.
	path := filepath.Join(t.TempDir(), "node_key.json")
	nk, err := gnop2p.GeneratePersistedNodeKey(path)
	if err != nil {
		t.Fatal(err)
	}
	pub, format, err := keyfmt.LoadNodeKey(path)
	want := nk.PrivKey.PubKey().(gnoed.PubKeyEd25519)
	if err != nil || format != keyfmt.GnoNodeKey || !bytes.Equal(pub, want[:]) {
		data, _ := os.ReadFile(path)
		t.Fatalf("LoadNodeKey(gno's %s) = %x, %v, %v; want %x", data, pub, format, err, want[:])
	}
}

// TestKeyFormatsCometBFT checks package keyfmt against CometBFT v0.38's
// own code: the address, node_key.json as CometBFT writes it, and the
// genesis validator entry byte for byte.
func TestKeyFormatsCometBFT(t *testing.T) {
	for i := 0; i < 20; i++ {
		pub := cmted.GenPrivKey().PubKey()
		std := ed25519.PublicKey(pub.Bytes())
		if got, want := keyfmt.CometBFTAddress(std), pub.Address().String(); got != want {
			t.Fatalf("CometBFTAddress = %s, CometBFT's %s", got, want)
		}
		gv := cmttypes.GenesisValidator{Address: pub.Address(), PubKey: pub, Power: int64(i + 1), Name: "val"}
		want, err := cmtjson.MarshalIndent(gv, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if got := keyfmt.CometBFTGenesisValidator(std, int64(i+1), "val").JSON(); !bytes.Equal(got, want) {
			t.Fatalf("CometBFTGenesisValidator:\n%s\nCometBFT's:\n%s", got, want)
		}
		var gv2 cmttypes.GenesisValidator
		if err := cmtjson.Unmarshal(keyfmt.CometBFTGenesisValidator(std, 7, "v").JSON(), &gv2); err != nil || !gv2.PubKey.Equals(pub) || !bytes.Equal(gv2.Address, pub.Address()) {
			t.Fatalf("CometBFT reads our genesis entry as %+v, %v", gv2, err)
		}
		// CometBFT's JSON shows the key in base64, as ParsePublicKey takes it.
		js, _ := cmtjson.Marshal(pub)
		b64 := strings.TrimSuffix(strings.SplitAfter(string(js), `"value":"`)[1], `"}`)
		if parsed, err := keyfmt.ParsePublicKey(b64); err != nil || !bytes.Equal(parsed, std) {
			t.Fatalf("ParsePublicKey(%s) = %x, %v", b64, parsed, err)
		}
	}
	path := filepath.Join(t.TempDir(), "node_key.json")
	nk, err := cmtp2p.LoadOrGenNodeKey(path)
	if err != nil {
		t.Fatal(err)
	}
	pub, format, err := keyfmt.LoadNodeKey(path)
	if err != nil || format != keyfmt.CometBFTNodeKey || !bytes.Equal(pub, nk.PubKey().Bytes()) {
		t.Fatalf("LoadNodeKey(CometBFT's) = %x, %v, %v; want %x", pub, format, err, nk.PubKey().Bytes())
	}
}

// TestIdentityShowGno: the identity `signerkit identity show` prints for
// each of gno's settings is read back by gno's own config code as the key
// it prints in hex, and the validator key `keys show` prints as gpub1…
// and genesis entries is the one gno and CometBFT read.
func TestIdentityShowGno(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	run := func(args ...string) string {
		out, err := exec.Command(skBin(t, "signerkit"), args...).CombinedOutput()
		if err != nil {
			t.Fatalf("signerkit %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("init", "-home", home, "-protocol", "tm2-remote", "-validator", "tcp://127.0.0.1:1",
		"-key", "inprocess:file="+filepath.Join(home, "identity.pem"), "-height", "1")
	cfg := filepath.Join(home, "signerkit.toml")
	out := run("identity", "show", "-config", cfg)
	hexKey := quoted(t, out, "hex:    ed25519:", "\n")
	want, err := hex.DecodeString(hexKey)
	if err != nil || len(want) != 32 {
		t.Fatalf("identity show's hex %q:\n%s", hexKey, out)
	}
	remote := rsclient.DefaultRemoteSignerClientConfig()
	remote.AuthorizedKeys = []string{quoted(t, out, `tcp_authorized_keys = ["`, `"]`)}
	if err := remote.ValidateBasic(); err != nil {
		t.Fatalf("gno's remote_signer refuses tcp_authorized_keys %q: %v", remote.AuthorizedKeys[0], err)
	}
	back, err := gnocrypto.PubKeyFromBech32(remote.AuthorizedKeys[0])
	if err != nil || !bytes.Equal(back.Bytes()[len(back.Bytes())-32:], want) {
		t.Fatalf("gno reads tcp_authorized_keys as %v, %v; want %x", back, err, want)
	}
	tmkms := gnoprivval.DefaultTmkmsListenerConfig()
	tmkms.AllowedKMSPubKeys = []string{quoted(t, out, `allowed_kms_pubkeys = ["`, `"]`)}
	keys, err := tmkms.ParseAllowlist()
	if err != nil || len(keys) != 1 || !bytes.Equal(keys[0][:], want) {
		t.Fatalf("gno's tmkms_listener reads allowed_kms_pubkeys %q as %v, %v", tmkms.AllowedKMSPubKeys[0], keys, err)
	}

	// The validator key is the identity file here: keys show prints the
	// same key, as gno reads it.
	out = run("keys", "show", "-config", cfg)
	gpub, err := gnocrypto.PubKeyFromBech32(quoted(t, out, "gno public key:", "\n"))
	if err != nil || !bytes.Equal(gpub.Bytes()[len(gpub.Bytes())-32:], want) {
		t.Fatalf("keys show's gpub reads as %v, %v; want %x", gpub, err, want)
	}
	centry := out[strings.Index(out, "cometbft genesis validator"):]
	centry = centry[strings.Index(centry, "{") : strings.Index(centry, "\n    }")+6]
	var cgv cmttypes.GenesisValidator
	if err := cmtjson.Unmarshal([]byte(centry), &cgv); err != nil || !bytes.Equal(cgv.PubKey.Bytes(), want) || !bytes.Equal(cgv.Address, cgv.PubKey.Address()) {
		t.Fatalf("CometBFT reads keys show's genesis entry %s as %+v, %v", centry, cgv, err)
	}
	if !strings.Contains(out, "cometbft address:    "+cgv.PubKey.Address().String()) {
		t.Fatalf("keys show's CometBFT address is not CometBFT's %s:\n%s", cgv.PubKey.Address(), out)
	}
	entry := out[strings.Index(out, "gno genesis validator"):]
	entry = entry[strings.Index(entry, "{") : strings.Index(entry, "\n    }")+6]
	var gv gnotypes.GenesisValidator
	if err := amino.UnmarshalJSON([]byte(entry), &gv); err != nil || gv.PubKey == nil || !bytes.Equal(gv.PubKey.Bytes()[len(gv.PubKey.Bytes())-32:], want) || gv.Address != gv.PubKey.Address() {
		t.Fatalf("gno reads keys show's genesis entry %s as %+v, %v", entry, gv, err)
	}
}

// quoted returns the text of s between the first from and the next to,
// trimmed.
func quoted(t *testing.T, s, from, to string) string {
	t.Helper()
	_, rest, ok := strings.Cut(s, from)
	if !ok {
		t.Fatalf("no %q in:\n%s", from, s)
	}
	v, _, _ := strings.Cut(rest, to)
	return strings.TrimSpace(v)
}
