package bech32

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
)

// BIP 173's test vectors.

func TestValidChecksum(t *testing.T) {
	for _, s := range []string{
		"A12UEL5L",
		"a12uel5l",
		"an83characterlonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio1tt5tgs",
		"abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw",
		"11qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqc8247j",
		"split1checkupstagehandshakeupstreamerranterredcaperred2y9e3w",
		"?1ezyfcl",
	} {
		hrp, data, err := Decode(s)
		if err != nil {
			t.Errorf("Decode(%q): %v", s, err)
			continue
		}
		got, err := Encode(hrp, data)
		if err != nil || got != strings.ToLower(s) {
			t.Errorf("Encode(Decode(%q)) = %q, %v", s, got, err)
		}
	}
}

func TestInvalidChecksum(t *testing.T) {
	for _, s := range []string{
		"\x201nwldj5",
		"\x7f1axkwrx",
		"\x801eym55h",
		"an84characterslonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio1569pvx",
		"pzry9x0s0muk",
		"1pzry9x0s0muk",
		"x1b4n0q5v",
		"li1dgmt3",
		"de1lg7wt\xff",
		"A1G7SGD8",
		"10a06t8",
		"1qzzfhee",
	} {
		if hrp, data, err := Decode(s); err == nil {
			t.Errorf("Decode(%q) = %q, %v; want an error", s, hrp, data)
		}
	}
}

// scriptPubKey returns a segwit address's output script, as BIP 173's
// address vectors give it.
func scriptPubKey(t *testing.T, hrp, addr string) []byte {
	t.Helper()
	h, data, err := Decode(addr)
	if err != nil || h != hrp || len(data) < 1 || data[0] > 16 {
		return nil
	}
	prog, err := ConvertBits(data[1:], 5, 8, false)
	if err != nil || len(prog) < 2 || len(prog) > 40 || (data[0] == 0 && len(prog) != 20 && len(prog) != 32) {
		return nil
	}
	op := data[0]
	if op > 0 {
		op += 0x50
	}
	return append([]byte{op, byte(len(prog))}, prog...)
}

func TestValidAddress(t *testing.T) {
	for _, v := range []struct{ addr, script string }{
		{"BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4", "0014751e76e8199196d454941c45d1b3a323f1433bd6"},
		{"tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7", "00201863143c14c5166804bd19203356da136c985678cd4d27a1b8c6329604903262"},
		{"bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7k7grplx", "5128751e76e8199196d454941c45d1b3a323f1433bd6751e76e8199196d454941c45d1b3a323f1433bd6"},
		{"BC1SW50QA3JX3S", "6002751e"},
		{"bc1zw508d6qejxtdg4y5r3zarvaryvg6kdaj", "5210751e76e8199196d454941c45d1b3a323"},
		{"tb1qqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesrxh6hy", "0020000000c4a5cad46221b2a187905e5266362b99d5e91c6ce24d165dab93e86433"},
	} {
		hrp := strings.ToLower(v.addr[:2])
		want, _ := hex.DecodeString(v.script)
		got := scriptPubKey(t, hrp, v.addr)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: script %x, want %x", v.addr, got, want)
			continue
		}
		// Re-encode: version, then the program in 5-bit groups.
		prog, _ := ConvertBits(want[2:], 8, 5, true)
		ver := want[0]
		if ver > 0 {
			ver -= 0x50
		}
		enc, err := Encode(hrp, append([]byte{ver}, prog...))
		if err != nil || enc != strings.ToLower(v.addr) {
			t.Errorf("re-encoding %s: %q, %v", v.addr, enc, err)
		}
	}
}

func TestInvalidAddress(t *testing.T) {
	for _, v := range []struct{ hrp, addr string }{
		{"bc", "tc1qw508d6qejxtdg4y5r3zarvary0c5xw7kg3g4ty"}, // invalid human-readable part
		{"bc", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5"}, // invalid checksum
		{"bc", "BC13W508D6QEJXTDG4Y5R3ZARVARY0C5XW7KN40WF2"}, // invalid witness version
		{"bc", "bc1rw5uspcuh"},                               // invalid program length
		{"bc", "bc10w508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kw5rljs90"},
		{"bc", "BC1QR508D6QEJXTDG4Y5R3ZARVARYV98GJ9P"},                           // program length for v0
		{"tb", "tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sL5k7"}, // mixed case
		{"bc", "bc1zw508d6qejxtdg4y5r3zarvaryvqyzf3du"},                          // zero padding of more than 4 bits
		{"tb", "tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3pjxtptv"}, // non-zero padding
		{"bc", "bc1gmk9yu"}, // empty data section
	} {
		if got := scriptPubKey(t, v.hrp, v.addr); got != nil {
			t.Errorf("%s: got script %x, want invalid", v.addr, got)
		}
	}
}

func TestBytesRoundTrip(t *testing.T) {
	for n := 0; n <= 40; n++ {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i*37 + n)
		}
		s, err := EncodeBytes("g", b)
		if err != nil {
			t.Fatal(err)
		}
		hrp, got, err := DecodeBytes(s)
		if err != nil || hrp != "g" || !bytes.Equal(got, b) {
			t.Fatalf("%d bytes: %q -> %q %x %v", n, s, hrp, got, err)
		}
	}
	if _, err := Encode("g", []byte{32}); err == nil {
		t.Error("Encode accepted a value of 32")
	}
	if _, err := Encode("aB", nil); err == nil {
		t.Error("Encode accepted a mixed-case hrp")
	}
}

func TestLong(t *testing.T) {
	b := bytes.Repeat([]byte{0xa5}, 55) // a tm2 Ed25519 public key's size
	if _, err := EncodeBytes("gpub", b); err == nil {
		t.Fatal("EncodeBytes took a string over BIP 173's 90 characters")
	}
	s, err := EncodeBytesLong("gpub", b)
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 99 {
		t.Fatalf("len %d, want 99", len(s))
	}
	if _, _, err := DecodeBytes(s); err == nil {
		t.Fatal("DecodeBytes took a string over 90 characters")
	}
	hrp, got, err := DecodeBytesLong(s)
	if err != nil || hrp != "gpub" || !bytes.Equal(got, b) {
		t.Fatalf("DecodeBytesLong = %q, %x, %v", hrp, got, err)
	}
	if _, _, err := DecodeBytesLong(strings.Repeat("q", MaxLengthLong+1)); err == nil {
		t.Fatal("DecodeBytesLong took a string over MaxLengthLong")
	}
}
