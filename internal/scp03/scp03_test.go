package scp03

import (
	"bytes"
	"crypto/aes"
	"encoding/hex"
	"testing"
)

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// RFC 4493 section 4 test vectors.
func TestCMACRFC4493(t *testing.T) {
	key := unhex(t, "2b7e151628aed2a6abf7158809cf4f3c")
	msg := unhex(t, "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e5130c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710")
	for _, tc := range []struct {
		n    int
		want string
	}{
		{0, "bb1d6929e95937287fa37d129b756746"},
		{16, "070a16b46b4d4144f79bdd9dd04a287c"},
		{40, "dfa66747de9ae63030ca32611497c827"},
		{64, "51f0bebf7e3b9d92fc49741779363cfe"},
	} {
		got := CMAC(key, msg[:tc.n])
		if hex.EncodeToString(got[:]) != tc.want {
			t.Errorf("CMAC(%d bytes) = %x, want %s", tc.n, got, tc.want)
		}
	}
	// Split input gives the same MAC.
	a, b := CMAC(key, msg[:7], msg[7:40]), CMAC(key, msg[:40])
	if a != b {
		t.Error("CMAC of split input differs")
	}
}

// TestKAT checks every value of docs/protocols.md B.3 and B.4.
func TestKAT(t *testing.T) {
	enc, mac := AuthKey([]byte("password"))
	if hex.EncodeToString(enc[:]) != "090b47dbed595654901dee1cc655e420" || hex.EncodeToString(mac[:]) != "592fd483f759e29909a04c4505d2ce0a" {
		t.Fatalf("AuthKey = %x %x", enc, mac)
	}
	host, card := unhex(t, "0001020304050607"), unhex(t, "08090a0b0c0d0e0f")
	k := DeriveSessionKeys(enc[:], mac[:], host, card)
	for _, c := range []struct {
		name string
		got  []byte
		want string
	}{
		{"S-ENC", k.ENC[:], "6a7481280688c6e0acf6226085a33167"},
		{"S-MAC", k.MAC[:], "4387b8a1aef81f16782246452c6485c1"},
		{"S-RMAC", k.RMAC[:], "3a5b6bcce25badb45333b40160557a67"},
		{"card cryptogram", k.Cryptogram(ConstCardCryptogram, host, card), "0d89ea51bf1bf533"},
		{"host cryptogram", k.Cryptogram(ConstHostCryptogram, host, card), "b01410d72022ed0e"},
	} {
		if hex.EncodeToString(c.got) != c.want {
			t.Errorf("%s = %x, want %s", c.name, c.got, c.want)
		}
	}
	hostCrypto := k.Cryptogram(ConstHostCryptogram, host, card)
	zero := make([]byte, 16)
	chain := MAC(k.MAC[:], zero, 0x04, 0x00, hostCrypto)
	auth := Frame{Cmd: 0x04, Payload: append(append([]byte{0x00}, hostCrypto...), chain[:8]...)}.Bytes()
	if got := hex.EncodeToString(auth); got != "04001100b01410d72022ed0ec1e620c499fbf1a9" {
		t.Errorf("Authenticate frame = %s", got)
	}
	if got := hex.EncodeToString(chain[:]); got != "c1e620c499fbf1a9430c6f8678618bdb" {
		t.Errorf("chain after auth = %s", got)
	}
	block, _ := aes.NewCipher(k.ENC[:])
	iv := IV(block, 1)
	if got := hex.EncodeToString(iv[:]); got != "acd472272db65af95e7cd64c0f888bbc" {
		t.Errorf("IV = %s", got)
	}
	ct := Encrypt(block, iv, Pad(Frame{Cmd: 0x01, Payload: []byte("hello")}.Bytes()))
	cmac := MAC(k.MAC[:], chain[:], 0x05, 0x00, ct)
	cmd := Frame{Cmd: 0x05, Payload: append(append([]byte{0x00}, ct...), cmac[:8]...)}.Bytes()
	if got := hex.EncodeToString(cmd); got != "0500190046a77ba4f8e023365ef5ac2b0680f95b4e028f51312e55d4" {
		t.Errorf("Echo command = %s", got)
	}
	if got := hex.EncodeToString(cmac[:]); got != "4e028f51312e55d43c662b635e6a6873" {
		t.Errorf("chain after command = %s", got)
	}
	rct := Encrypt(block, iv, Pad(Frame{Cmd: 0x81, Payload: []byte("hello")}.Bytes()))
	rmac := MAC(k.RMAC[:], cmac[:], 0x85, 0x00, rct)
	resp := Frame{Cmd: 0x85, Payload: append(append([]byte{0x00}, rct...), rmac[:8]...)}.Bytes()
	if got := hex.EncodeToString(resp); got != "85001900677408825ed3b2da31f14eee4809ce12d4df95574f813914" {
		t.Errorf("Echo response = %s", got)
	}
	pt, err := Decrypt(block, iv, rct)
	if err != nil {
		t.Fatal(err)
	}
	inner, err := Unpad(pt)
	if err != nil || !bytes.Equal(inner, []byte{0x81, 0x00, 0x05, 'h', 'e', 'l', 'l', 'o'}) {
		t.Errorf("decrypted response %x, %v", inner, err)
	}
}

func TestPad(t *testing.T) {
	for n := 0; n < 40; n++ {
		b := bytes.Repeat([]byte{0x80}, n)
		p := Pad(b)
		if len(p)%16 != 0 || len(p) <= n {
			t.Fatalf("Pad(%d) len %d", n, len(p))
		}
		u, err := Unpad(p)
		if err != nil || !bytes.Equal(u, b) {
			t.Fatalf("Unpad(Pad(%d)) = %x, %v", n, u, err)
		}
	}
	if _, err := Unpad(make([]byte, 16)); err == nil {
		t.Error("Unpad of zeros succeeded")
	}
	if _, err := Unpad(nil); err == nil {
		t.Error("Unpad of nothing succeeded")
	}
}

func FuzzParseFrame(f *testing.F) {
	f.Add([]byte{0x81, 0x00, 0x01, 0x00})
	f.Add([]byte{0x7f, 0x00, 0x01, 0x03})
	f.Add([]byte{0x85, 0x00, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := ParseFrame(b)
		if err != nil {
			return
		}
		if !bytes.Equal(fr.Bytes(), b) {
			t.Fatalf("round trip %x -> %x", b, fr.Bytes())
		}
	})
}

func FuzzUnpad(f *testing.F) {
	f.Add(Pad([]byte("hello")))
	f.Add(make([]byte, 16))
	f.Fuzz(func(t *testing.T, b []byte) {
		u, err := Unpad(b)
		if err == nil && (len(u) >= len(b) || b[len(u)] != 0x80) {
			t.Fatalf("Unpad(%x) = %x", b, u)
		}
	})
}
