package cardsim_test

import (
	"crypto/ed25519"
	"testing"

	"github.com/signerkit/signerkit/openpgpcard/cardsim"
)

// ext is an extended-length APDU.
func ext(ins, p1, p2 byte, data []byte) []byte {
	return append([]byte{0, ins, p1, p2, 0, byte(len(data) >> 8), byte(len(data))}, data...)
}

// importList is an extended header list for an Ed25519 seed in the
// signature slot, its 7F48 and 5F48 as given.
func importList(list, values []byte) []byte {
	body := append([]byte{0xB6, 0x00, 0x7F, 0x48, byte(len(list))}, list...)
	body = append(append(body, 0x5F, 0x48, byte(len(values))), values...)
	return append([]byte{0x4D, byte(len(body))}, body...)
}

// TestImportStatusWords checks PUT DATA's key import: PW3 first (6982),
// P1-P2 3FFF, malformed lists refused with 6A80 and the slot left empty,
// and a good one whose key then reads back.
func TestImportStatusWords(t *testing.T) {
	t.Parallel()
	c := selected(t, cardsim.Config{Profile: cardsim.Instant})
	// Ed25519 attributes in the signature slot.
	putAttr := ext(0xDA, 0, 0xC1, []byte{0x16, 0x2B, 0x06, 0x01, 0x04, 0x01, 0xDA, 0x47, 0x0F, 0x01})
	seed := make([]byte, ed25519.SeedSize)
	seed[0] = 7
	good := importList([]byte{0x92, 0x20}, seed)
	if sw := status(c.Transmit(ext(0xDB, 0x3F, 0xFF, good))); sw != 0x6982 {
		t.Errorf("import without PW3: %04x, want 6982", sw)
	}
	if sw := status(c.Transmit(short(0, 0x20, 0, 0x83, []byte(cardsim.DefaultPW3)))); sw != 0x9000 {
		t.Fatalf("VERIFY PW3: %04x", sw)
	}
	if sw := status(c.Transmit(putAttr)); sw != 0x9000 {
		t.Fatalf("PUT DATA C1: %04x", sw)
	}
	for name, data := range map[string][]byte{
		"short seed":        importList([]byte{0x92, 0x1F}, seed[:31]),
		"values left over":  importList([]byte{0x92, 0x20}, append(seed, 0)),
		"values cut short":  importList([]byte{0x92, 0x21}, seed),
		"tag twice":         importList([]byte{0x92, 0x10, 0x92, 0x10}, seed),
		"no 4D":             good[2:],
		"bad control":       append([]byte{0x4D, good[1]}, append([]byte{0xB7}, good[3:]...)...),
		"malformed lengths": importList([]byte{0x92, 0x85}, seed),
	} {
		if sw := status(c.Transmit(ext(0xDB, 0x3F, 0xFF, data))); sw != 0x6A80 {
			t.Errorf("%s: %04x, want 6A80", name, sw)
		}
	}
	if sw := status(c.Transmit(short(0, 0x47, 0x81, 0, []byte{0xB6, 0}))); sw != 0x6A88 {
		t.Errorf("after refused imports, READ PUBLIC KEY: %04x, want 6A88 (no key)", sw)
	}
	if sw := status(c.Transmit(ext(0xDB, 0x3F, 0xFE, good))); sw != 0x6B00 {
		t.Errorf("P1-P2 3FFE: %04x, want 6B00", sw)
	}
	if sw := status(c.Transmit(ext(0xDB, 0x3F, 0xFF, good))); sw != 0x9000 {
		t.Fatalf("import: %04x", sw)
	}
	resp := c.Transmit(short(0, 0x47, 0x81, 0, []byte{0xB6, 0}, 0))
	pub := ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
	if status(resp) != 0x9000 || len(resp) < 34 || string(resp[len(resp)-34:len(resp)-2]) != string(pub) {
		t.Errorf("READ PUBLIC KEY after import: %x, want the point %x", resp, pub)
	}
}

// FuzzImport sends PUT DATA key imports of any data: the card answers with
// a status word and, when it takes the key, reads its public key back.
func FuzzImport(f *testing.F) {
	f.Add(importList([]byte{0x92, 0x20}, make([]byte, 32)))
	f.Add(importList([]byte{0x91, 0x04, 0x92, 0x01, 0x93, 0x01}, []byte{0, 1, 0, 1, 3, 5}))
	f.Add([]byte{0x4D, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4000 {
			return
		}
		c := selected(t, cardsim.Config{Profile: cardsim.Instant})
		c.Transmit(short(0, 0x20, 0, 0x83, []byte(cardsim.DefaultPW3)))
		if len(data) > 0 && data[len(data)-1]&1 == 1 { // half the runs on an Ed25519 slot
			c.Transmit(ext(0xDA, 0, 0xC1, []byte{0x16, 0x2B, 0x06, 0x01, 0x04, 0x01, 0xDA, 0x47, 0x0F, 0x01}))
		}
		resp := c.Transmit(ext(0xDB, 0x3F, 0xFF, data))
		if len(resp) != 2 {
			t.Fatalf("import answered %x", resp)
		}
		if status(resp) == 0x9000 {
			if sw := status(c.Transmit(short(0, 0x47, 0x81, 0, []byte{0xB6, 0}, 0))); sw != 0x9000 {
				t.Fatalf("an imported key does not read back: %04x", sw)
			}
		}
	})
}
