package interop

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	cmted "github.com/cometbft/cometbft/crypto/ed25519"
	cmtjson "github.com/cometbft/cometbft/libs/json"
	cmtp2p "github.com/cometbft/cometbft/p2p"
	cmttypes "github.com/cometbft/cometbft/types"
	"github.com/gnolang/gno/tm2/pkg/amino"
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
