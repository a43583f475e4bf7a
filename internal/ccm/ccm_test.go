package ccm

import (
	"bytes"
	"crypto/aes"
	"encoding/hex"
	"errors"
	"testing"
)

// vectors were made with pyca/cryptography 48.0.0's AESCCM (OpenSSL's
// CCM), tag_length=16, no associated data: an implementation other than
// this one.
var vectors = []struct{ key, nonce, plain, sealed string }{
	{"000102030405060708090a0b0c0d0e0f", "101112131415161718191a1b1c", "", "d5e7b9742adec972909274ecbe50c0c9"},
	{"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", "202122232425262728292a2b2c",
		"7369676e65726b69742077726170207465737420766563746f722c203435206279746573206c6f6e672e2e2e",
		"bb177de90fba96458fb27b3123903ebb51a2bebb839f7081035d66d8c9e2154f130db9c3b7d391b2b020b24faff0db872afe8a17bb0153f6d808c283"},
	{"000102030405060708090a0b0c0d0e0f1011121314151617", "00000000000000000000000000",
		"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
		"3ae705bdbd2ebea55b8bb6d85d0fc14cd85f7ae7d93c4e0cfd5beeacdf67536fcfb594b3ad41e9174f33226df3556813"},
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestVectors(t *testing.T) {
	for i, v := range vectors {
		block, err := aes.NewCipher(unhex(t, v.key))
		if err != nil {
			t.Fatal(err)
		}
		nonce, plain, sealed := unhex(t, v.nonce), unhex(t, v.plain), unhex(t, v.sealed)
		if got := Seal(block, nonce, plain); !bytes.Equal(got, sealed) {
			t.Errorf("vector %d: Seal = %x, want %x", i, got, sealed)
		}
		got, err := Open(block, nonce, sealed)
		if err != nil || !bytes.Equal(got, plain) {
			t.Errorf("vector %d: Open = %x, %v", i, got, err)
		}
		// Every single-bit change anywhere fails.
		for j := range sealed {
			bad := bytes.Clone(sealed)
			bad[j] ^= 0x10
			if _, err := Open(block, nonce, bad); !errors.Is(err, ErrOpen) {
				t.Fatalf("vector %d: byte %d flipped: %v", i, j, err)
			}
		}
		badNonce := bytes.Clone(nonce)
		badNonce[0] ^= 1
		if _, err := Open(block, badNonce, sealed); !errors.Is(err, ErrOpen) {
			t.Errorf("vector %d: other nonce: %v", i, err)
		}
	}
}

func TestOpenShort(t *testing.T) {
	block, _ := aes.NewCipher(make([]byte, 16))
	for _, n := range []int{0, 1, TagSize - 1} {
		if _, err := Open(block, make([]byte, NonceSize), make([]byte, n)); !errors.Is(err, ErrOpen) {
			t.Errorf("%d bytes: %v", n, err)
		}
	}
	if _, err := Open(block, make([]byte, 12), make([]byte, 32)); !errors.Is(err, ErrOpen) {
		t.Errorf("12-byte nonce: %v", err)
	}
}

func FuzzOpen(f *testing.F) {
	f.Add(make([]byte, NonceSize), make([]byte, 40))
	f.Add([]byte{1}, []byte{})
	block, _ := aes.NewCipher(make([]byte, 32))
	f.Fuzz(func(t *testing.T, nonce, sealed []byte) {
		plain, err := Open(block, nonce, sealed)
		if err != nil {
			return
		}
		if got := Seal(block, nonce, plain); !bytes.Equal(got, sealed) {
			t.Fatalf("Open then Seal does not round-trip")
		}
	})
}
