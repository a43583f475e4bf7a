package keyfmt

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"testing"
)

// Fuzzed parsers never panic, return a 32-byte key or an *Error wrapping
// ErrFormat, and what they return encodes back to a string that parses to
// the same key.

func FuzzParsePublicKey(f *testing.F) {
	for _, s := range []string{vecGpub, "ed25519:" + hex.EncodeToString(vecPub), base64.StdEncoding.EncodeToString(vecPub),
		"gpub1", "ed25519:", "x:y", vecGnoAdr, "GPUB1" + vecGpub[5:]} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		pub, err := ParsePublicKey(s)
		if err != nil {
			var e *Error
			if pub != nil || !errors.As(err, &e) || !errors.Is(err, ErrFormat) {
				t.Fatalf("ParsePublicKey(%q) = %x, %v", s, pub, err)
			}
			return
		}
		if len(pub) != ed25519.PublicKeySize {
			t.Fatalf("ParsePublicKey(%q): %d bytes", s, len(pub))
		}
		again, err := ParsePublicKey(GnoPubKey(pub))
		if err != nil || !bytes.Equal(again, pub) {
			t.Fatalf("round trip of %x: %x, %v", pub, again, err)
		}
	})
}

func FuzzParseGnoAmino(f *testing.F) {
	b, _ := hex.DecodeString(vecAmino)
	f.Add(b)
	f.Add(b[:10])
	f.Add([]byte{0x0a, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		pub, err := ParseGnoAmino(b)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatal(err)
			}
			return
		}
		if !bytes.Equal(GnoAmino(pub), b) {
			t.Fatalf("%x parsed to %x, which encodes otherwise", b, pub)
		}
	})
}

func FuzzParseNodeKey(f *testing.F) {
	for _, s := range []string{
		`{"priv_key":{"type":"tendermint/PrivKeyEd25519","value":"` + vecPriv + `"}}`,
		`{"priv_key":"` + vecPriv + `"}`,
		`{"priv_key":{"@type":"/tm.PrivKeyEd25519","value":"` + vecPriv + `"}}`,
		`{"priv_key":{"type":1}}`, `{"priv_key":null}`, `[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		pub, format, err := ParseNodeKey(data)
		if err != nil {
			if pub != nil || format != 0 || !errors.Is(err, ErrFormat) {
				t.Fatalf("ParseNodeKey = %x, %v, %v", pub, format, err)
			}
			return
		}
		if len(pub) != ed25519.PublicKeySize || format < CometBFTNodeKey || format > GnoTypedNodeKey {
			t.Fatalf("ParseNodeKey = %x, %v", pub, format)
		}
	})
}
