package cardsim_test

import (
	"bytes"
	"testing"

	"github.com/signerkit/signerkit/openpgpcard/cardsim"
)

func status(resp []byte) uint16 { return uint16(resp[len(resp)-2])<<8 | uint16(resp[len(resp)-1]) }

func short(cla, ins, p1, p2 byte, data []byte, le ...byte) []byte {
	b := []byte{cla, ins, p1, p2}
	if len(data) > 0 {
		b = append(append(b, byte(len(data))), data...)
	}
	return append(b, le...)
}

func selected(t *testing.T, cfg cardsim.Config) *cardsim.Card {
	t.Helper()
	c := cardsim.New(cfg)
	if sw := status(c.Transmit(short(0, 0xA4, 4, 0, cardsim.AID))); sw != 0x9000 {
		t.Fatalf("SELECT: %04x", sw)
	}
	return c
}

func TestStatusWords(t *testing.T) {
	t.Parallel()
	c := cardsim.New(cardsim.Config{Profile: cardsim.Instant})
	if sw := status(c.Transmit(short(0, 0xCA, 0, 0x6E, nil, 0))); sw != 0x6985 {
		t.Errorf("GET DATA before SELECT: %04x, want 6985", sw)
	}
	if sw := status(c.Transmit(short(0, 0xA4, 4, 0, []byte{0xA0, 0, 0, 0, 1}))); sw != 0x6A82 {
		t.Errorf("SELECT of another AID: %04x, want 6a82", sw)
	}
	c = selected(t, cardsim.Config{Profile: cardsim.Instant})
	cases := []struct {
		name string
		apdu []byte
		want uint16
	}{
		{"unknown INS", short(0, 0x99, 0, 0, nil), 0x6D00},
		{"unknown CLA", short(0x80, 0xCA, 0, 0x6E, nil, 0), 0x6E00},
		{"unknown DO", short(0, 0xCA, 0x12, 0x34, nil, 0), 0x6A88},
		{"garbled APDU", []byte{0, 0xCA, 0}, 0x6700},
		{"Lc past the end", []byte{0, 0x20, 0, 0x81, 9, 1, 2}, 0x6700},
		{"PSO:CDS unverified", short(0, 0x2A, 0x9E, 0x9A, []byte{1, 2, 3}), 0x6982},
		{"PSO:DECIPHER unverified", short(0, 0x2A, 0x80, 0x86, []byte{0, 2, 3}), 0x6982},
		{"generate unverified", short(0, 0x47, 0x80, 0, []byte{0xB6, 0}), 0x6982},
		{"read a missing key", short(0, 0x47, 0x81, 0, []byte{0xB6, 0}), 0x6A88},
		{"PUT DATA unverified", short(0, 0xDA, 0, 0x5B, []byte("x")), 0x6982},
		{"VERIFY state", short(0, 0x20, 0, 0x81, nil), 0x63C3},
		{"VERIFY bad P2", short(0, 0x20, 0, 0x84, []byte("123456")), 0x6B00},
		{"GET RESPONSE with nothing left", short(0, 0xC0, 0, 0, nil, 0), 0x6985},
	}
	for _, tc := range cases {
		if sw := status(c.Transmit(tc.apdu)); sw != tc.want {
			t.Errorf("%s: %04x, want %04x", tc.name, sw, tc.want)
		}
	}
}

func TestPINCounters(t *testing.T) {
	t.Parallel()
	c := selected(t, cardsim.Config{Profile: cardsim.Instant})
	for _, want := range []uint16{0x63C2, 0x63C1, 0x6983, 0x6983} {
		if sw := status(c.Transmit(short(0, 0x20, 0, 0x83, []byte("wrongpin")))); sw != want {
			t.Fatalf("wrong PW3: %04x, want %04x", sw, want)
		}
	}
	if sw := status(c.Transmit(short(0, 0x20, 0, 0x83, []byte(cardsim.DefaultPW3)))); sw != 0x6983 {
		t.Fatalf("right PW3 once blocked: %04x, want 6983", sw)
	}
	if _, pw3 := c.Tries(); pw3 != 0 {
		t.Fatalf("PW3 counter %d", pw3)
	}
	// PW1 is separate: a wrong try, then the right one restores 3.
	c.Transmit(short(0, 0x20, 0, 0x81, []byte("000000")))
	if pw1, _ := c.Tries(); pw1 != 2 {
		t.Fatalf("PW1 counter %d, want 2", pw1)
	}
	if sw := status(c.Transmit(short(0, 0x20, 0, 0x81, []byte(cardsim.DefaultPW1)))); sw != 0x9000 {
		t.Fatalf("right PW1: %04x", sw)
	}
	if pw1, _ := c.Tries(); pw1 != cardsim.MaxTries {
		t.Fatalf("PW1 counter %d after the right PIN", pw1)
	}
	// The PW status bytes report the counters.
	resp := c.Transmit(short(0, 0xCA, 0, 0xC4, nil, 0))
	if got := resp[4:7]; !bytes.Equal(got, []byte{3, 0, 0}) || status(resp) != 0x9000 {
		t.Fatalf("PW status %x", resp)
	}
}

func TestChainingAndGetResponse(t *testing.T) {
	t.Parallel()
	c := selected(t, cardsim.Config{Profile: cardsim.Instant, ShortOnly: true})
	// A chained PUT DATA of 300 bytes of URL is refused as too long (255
	// at most), but a chain of two parts of a name works.
	if sw := status(c.Transmit(short(0, 0x20, 0, 0x83, []byte(cardsim.DefaultPW3)))); sw != 0x9000 {
		t.Fatal(sw)
	}
	if sw := status(c.Transmit(short(0x10, 0xDA, 0, 0x5B, []byte("Card")))); sw != 0x9000 {
		t.Fatalf("first link: %04x", sw)
	}
	if sw := status(c.Transmit(short(0x00, 0xDA, 0, 0x5B, []byte("holder")))); sw != 0x9000 {
		t.Fatalf("last link: %04x", sw)
	}
	resp := c.Transmit(short(0, 0xCA, 0, 0x65, nil, 0))
	if !bytes.Contains(resp, []byte("Cardholder")) {
		t.Fatalf("cardholder data %q", resp)
	}
	// A chain broken by another command.
	c.Transmit(short(0x10, 0xDA, 0, 0x5B, []byte("a")))
	if sw := status(c.Transmit(short(0x00, 0xCA, 0, 0x6E, nil, 0))); sw != 0x6883 {
		t.Fatalf("chain broken: %04x, want 6883", sw)
	}
	// Extended APDUs are refused on a short-only card.
	if sw := status(c.Transmit([]byte{0, 0xCA, 0, 0x6E, 0, 0, 0})); sw != 0x6700 {
		t.Fatalf("extended APDU: %04x", sw)
	}
	// A 4096-bit public key read with short APDUs comes in parts.
	c.Transmit(short(0, 0xDA, 0, 0xC1, []byte{0x01, 0x10, 0x00, 0x00, 0x20, 0x00}))
	if sw := status(c.Transmit(short(0, 0x47, 0x80, 0, []byte{0xB6, 0}, 0))); sw&0xFF00 != 0x6100 {
		t.Fatalf("generate rsa4096: %04x, want 61xx", sw)
	}
	var got []byte
	for range 5 {
		r := c.Transmit(short(0, 0xC0, 0, 0, nil, 0))
		got = append(got, r[:len(r)-2]...)
		if status(r) == 0x9000 {
			break
		}
	}
	if len(got) < 256 {
		t.Fatalf("GET RESPONSE gave %d more bytes", len(got))
	}
}

func TestATR(t *testing.T) {
	atr := cardsim.New(cardsim.Config{}).ATR()
	var x byte
	for _, b := range atr[1:] {
		x ^= b
	}
	if atr[0] != 0x3B || x != 0 {
		t.Fatalf("ATR %x: TS or TCK wrong", atr)
	}
}
