package bls_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signerkit/signerkit/bls"
	"github.com/signerkit/signerkit/signer"
)

// TestMarshalKeyFileBytes: MarshalKeyFile writes what encoding/json's
// MarshalIndent writes for the key file (as CometBFT does; the interop
// module checks against CometBFT itself), into a buffer of the exact size,
// so that growing it left no copy of the key behind.
func TestMarshalKeyFileBytes(t *testing.T) {
	for _, alg := range []signer.Algorithm{signer.BLS12381MinPK, signer.BLS12381MinSig} {
		for _, label := range []string{"key file", "another key", "a third"} {
			s := mustSeed(t, alg, label)
			data, err := bls.MarshalKeyFile(s)
			if err != nil {
				t.Fatal(err)
			}
			if cap(data) != len(data) {
				t.Errorf("%v: output of length %d in a buffer of %d", alg, len(data), cap(data))
			}
			sk, _ := s.SecretKey()
			minpk, err := bls.FromSecretKey(sk, signer.BLS12381MinPK)
			if err != nil {
				t.Fatal(err)
			}
			type typed struct {
				Type  string `json:"type"`
				Value []byte `json:"value"`
			}
			want, err := json.MarshalIndent(struct {
				Address string `json:"address"`
				PubKey  typed  `json:"pub_key"`
				PrivKey typed  `json:"priv_key"`
			}{
				fmt.Sprintf("%X", minpk.PublicKey().Address()),
				typed{"cometbft/PubKeyBls12_381", minpk.PublicKey().Bytes()},
				typed{"cometbft/PrivKeyBls12_381", sk},
			}, "", "  ")
			minpk.Close()
			if err != nil {
				t.Fatal(err)
			}
			if string(data) != string(want) {
				t.Errorf("%v: MarshalKeyFile wrote\n%s\nencoding/json writes\n%s", alg, data, want)
			}
		}
	}
}

func TestKeyFile(t *testing.T) {
	s := mustSeed(t, signer.BLS12381MinPK, "key file")
	data, err := bls.MarshalKeyFile(s)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Address string `json:"address"`
		PubKey  struct {
			Type  string `json:"type"`
			Value []byte `json:"value"`
		} `json:"pub_key"`
		PrivKey struct {
			Type  string `json:"type"`
			Value []byte `json:"value"`
		} `json:"priv_key"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	if f.PubKey.Type != "cometbft/PubKeyBls12_381" || f.PrivKey.Type != "cometbft/PrivKeyBls12_381" || len(f.PubKey.Value) != 96 || len(f.PrivKey.Value) != 32 || len(f.Address) != 40 {
		t.Fatalf("key file %s", data)
	}
	for _, alg := range []signer.Algorithm{0, signer.BLS12381MinPK, signer.BLS12381MinSig} {
		k, err := bls.ParseKeyFile(data, alg)
		if err != nil {
			t.Fatalf("ParseKeyFile(%v): %v", alg, err)
		}
		a, _ := k.SecretKey()
		b, _ := s.SecretKey()
		if string(a) != string(b) {
			t.Errorf("ParseKeyFile(%v) read another scalar", alg)
		}
		k.Close()
	}

	path := filepath.Join(t.TempDir(), "priv_validator_key.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	k, err := bls.Open(context.Background(), bls.Config{File: path})
	if err != nil {
		t.Fatal(err)
	}
	if !k.PublicKey().Equal(s.PublicKey()) {
		t.Error("Open read another key")
	}
	k.Close()
	if _, err := bls.Open(context.Background(), bls.Config{File: path + ".missing"}); !errors.Is(err, signer.ErrKeyNotFound) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := bls.Open(context.Background(), bls.Config{File: t.TempDir()}); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("directory: %v", err)
	}

	other := mustSeed(t, signer.BLS12381MinPK, "another key")
	otherPub := other.PublicKey().Bytes()
	for _, tc := range []struct {
		name string
		edit func(m map[string]any)
		want error
	}{
		{"pub_key of another key", func(m map[string]any) { m["pub_key"].(map[string]any)["value"] = otherPub }, signer.ErrInvalidKey},
		{"address of another key", func(m map[string]any) { m["address"] = strings.Repeat("AB", 20) }, signer.ErrInvalidKey},
		{"ed25519 priv_key type", func(m map[string]any) { m["priv_key"].(map[string]any)["type"] = "tendermint/PrivKeyEd25519" }, signer.ErrUnsupported},
		{"pub_key type", func(m map[string]any) { m["pub_key"].(map[string]any)["type"] = "tendermint/PubKeyEd25519" }, signer.ErrCorrupt},
		{"short priv_key", func(m map[string]any) { m["priv_key"].(map[string]any)["value"] = []byte{1, 2, 3} }, signer.ErrInvalidKey},
		{"zero priv_key", func(m map[string]any) { m["priv_key"].(map[string]any)["value"] = make([]byte, 32) }, signer.ErrInvalidKey},
		{"no priv_key", func(m map[string]any) { delete(m, "priv_key") }, signer.ErrUnsupported},
	} {
		var m map[string]any
		json.Unmarshal(data, &m)
		tc.edit(m)
		bad, _ := json.Marshal(m)
		if _, err := bls.ParseKeyFile(bad, 0); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	for _, bad := range []string{"", "{", "[]", "null x", `{"priv_key": 5}`} {
		if _, err := bls.ParseKeyFile([]byte(bad), 0); !errors.Is(err, signer.ErrCorrupt) {
			t.Errorf("ParseKeyFile(%q) = %v, want ErrCorrupt", bad, err)
		}
	}
}

func TestParseURI(t *testing.T) {
	for _, tc := range []struct {
		uri  string
		file string
		alg  signer.Algorithm
		kg   bls.KeyGen
		sec  bool
	}{
		{"bls:file=/etc/k.json", "/etc/k.json", 0, bls.KeyGenIETF, false},
		{"bls:file=/etc/k.json;algorithm=bls12381-minsig", "/etc/k.json", signer.BLS12381MinSig, bls.KeyGenIETF, false},
		{"bls:algorithm=bls12381-minpk?pin-source=env:SEED", "", signer.BLS12381MinPK, bls.KeyGenIETF, true},
		{"bls:keygen=cometbft?pin-value=x", "", 0, bls.KeyGenCometBFT, true},
		{"bls:", "", 0, bls.KeyGenIETF, false},
	} {
		cfg, err := bls.ParseURI(tc.uri)
		if err != nil {
			t.Errorf("ParseURI(%q): %v", tc.uri, err)
			continue
		}
		if cfg.File != tc.file || cfg.Key.Algorithm != tc.alg || cfg.KeyGen != tc.kg || (cfg.Secret != nil) != tc.sec {
			t.Errorf("ParseURI(%q) = %+v", tc.uri, cfg)
		}
	}
	for _, uri := range []string{
		"inprocess:file=/x", "bls:file=", "bls:algorithm=ed25519", "bls:algorithm=nope",
		"bls:keygen=v3", "bls:label=x", "bls:file=/x?pin-value=y", "bls:?pin-source=ftp://x",
	} {
		if _, err := bls.ParseURI(uri); !errors.Is(err, signer.ErrInvalidArgument) && !errors.Is(err, signer.ErrUnsupported) {
			t.Errorf("ParseURI(%q) = %v, want an error", uri, err)
		}
	}
}

func TestOpenURI(t *testing.T) {
	seed := strings.Repeat("s", 32)
	want, _ := bls.FromSeed([]byte(seed), signer.BLS12381MinSig)
	defer want.Close()
	ctx := context.Background()
	s, err := signer.Open(ctx, "bls:algorithm=bls12381-minsig?pin-value="+seed)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !want.PublicKey().Equal(s.Public()) {
		t.Error("bls: URI with pin-value opened another key")
	}
	s2, err := signer.OpenSecret(ctx, "bls:keygen=cometbft", signer.SecretBytes([]byte("hello")))
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	want2, _ := bls.FromCometBFTSecret([]byte("hello"), signer.BLS12381MinPK)
	defer want2.Close()
	if !want2.PublicKey().Equal(s2.Public()) {
		t.Error("OpenSecret with keygen=cometbft opened another key")
	}
	if _, err := signer.Open(ctx, "bls:"); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("bls: with no key = %v", err)
	}
	if _, err := signer.Open(ctx, "bls:?pin-value=short"); !errors.Is(err, signer.ErrInvalidKey) {
		t.Errorf("bls: with a 5-byte IETF seed = %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := bls.Open(cctx, bls.Config{Secret: signer.SecretBytes([]byte(seed))}); !errors.Is(err, context.Canceled) {
		t.Errorf("Open with a cancelled context = %v", err)
	}
	if _, err := bls.Open(ctx, bls.Config{Secret: signer.SecretBytes([]byte(seed)), KeyGen: 9}); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("Open with KeyGen 9 = %v", err)
	}
}
