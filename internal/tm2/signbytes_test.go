package tm2_test

import (
	"bytes"
	"testing"

	"github.com/signerkit/signerkit/internal/tm2"
	"github.com/signerkit/signerkit/signbytes"
)

// Every message this package hands out is what signbytes builds for the
// same content in the TM2 dialect, byte for byte: the kinds, a consensus
// round (NextStep) and the padded nil prevotes of OfSize. (signbytes's own
// TestAgreesWithInternalTM2 checks the kinds from its side.)
func TestAgreesWithSignbytes(t *testing.T) {
	check := func(what string, b []byte) {
		t.Helper()
		m, err := signbytes.ParseTM2(b)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		m.Format = signbytes.TM2
		got, err := m.Bytes()
		if err != nil || !bytes.Equal(got, b) {
			t.Fatalf("%s: signbytes builds %x, %v; tm2 %x", what, got, err, b)
		}
	}
	s := tm2.NewHeights("", 1<<40)
	for _, k := range tm2.Kinds() {
		check(k.String(), s.Next(k))
	}
	for _, st := range s.NextStep() {
		check("NextStep "+st.Kind.String(), st.Bytes)
	}
	for size := 30; size <= 130; size++ {
		check("OfSize", s.OfSize(size))
	}
}
