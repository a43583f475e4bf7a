package threshold

import (
	"bytes"
	"testing"

	"github.com/signerkit/signerkit/threshold/dkls23"
)

func FuzzParseDKLSPresign(f *testing.F) {
	f.Add(append(make([]byte, dklsIDSize), 1, 1, 2, 3))
	f.Add([]byte{})
	f.Add(make([]byte, dklsIDSize+1))
	f.Fuzz(func(t *testing.T, b []byte) {
		id, from, msg, err := parseDKLSPresign(b)
		if err != nil {
			return
		}
		if from < 1 || from > dkls23.MaxParties || len(msg) == 0 || len(msg) > maxDKLSMessage ||
			!bytes.Equal(id[:], b[:dklsIDSize]) || !bytes.Equal(msg, b[dklsIDSize+1:]) {
			t.Fatalf("parsed %x as id %x, from %d, a %d-byte message", b, id, from, len(msg))
		}
	})
}

func FuzzParseDKLSPresigned(f *testing.F) {
	f.Add(encodeDKLSPresigned([]byte{1, 2}, []byte{3}))
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		m1, m2, err := parseDKLSPresigned(b)
		if err != nil {
			return
		}
		if len(m1) == 0 || len(m2) == 0 || !bytes.Equal(encodeDKLSPresigned(m1, m2), b) {
			t.Fatalf("parsed %x into %x and %x", b, m1, m2)
		}
	})
}

func FuzzParseDKLS23Share(f *testing.F) {
	shares, err := dkls23.Deal(2, 3, nil)
	if err != nil {
		f.Fatal(err)
	}
	good, err := MarshalDKLS23Share(shares[1])
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(bytes.Replace(good, []byte("Participant: 2"), []byte("Participant: 3"), 1))
	f.Add([]byte("-----BEGIN SIGNERKIT DKLS23 SHARE-----\n-----END SIGNERKIT DKLS23 SHARE-----\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseDKLS23Share(b)
		if err != nil {
			return
		}
		again, err := MarshalDKLS23Share(s)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseDKLS23Share(again); err != nil {
			t.Fatalf("a parsed share does not parse again: %v", err)
		}
	})
}

// FuzzDKLS23PartyHandle feeds a party any request: it answers each, with
// an error frame when the request is not one it can serve, and never
// panics.
func FuzzDKLS23PartyHandle(f *testing.F) {
	shares, err := dklsShares()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(typeDKLSPresign, append(make([]byte, dklsIDSize), 1, 9))
	f.Add(typeDKLSFinish, make([]byte, dklsIDSize+5))
	f.Add(typeDKLSSign, make([]byte, dklsIDSize+32))
	f.Add(byte(1), []byte{0, 1, 0})
	f.Fuzz(func(t *testing.T, typ byte, body []byte) {
		p := &DKLS23Party{share: shares[1], max: 4, pres: map[dklsID]*dklsHeld{}}
		p.log = testLog(t)
		resp := p.handle(frame{typ: typ, id: 7, body: body}, coordinatorID{})
		if resp.id != 7 || resp.typ != typeError && resp.typ != typ+1 {
			t.Fatalf("request type %d answered with type %d id %d", typ, resp.typ, resp.id)
		}
		if resp.typ == typeDKLSShare {
			t.Fatal("a share without a presignature")
		}
	})
}
