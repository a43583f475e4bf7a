package ledger

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/signerkit/signerkit/signer"
)

// Our framing carries every APDU length in the number of reports
// reportCount says, and our deframer rebuilds it (package ledgergo checks
// both against zondax/ledger-go's framing).
func TestFramingRoundTrip(t *testing.T) {
	for n := 0; n <= 260; n++ {
		apdu := make([]byte, n)
		for i := range apdu {
			apdu[i] = byte(i*7 + 1)
		}
		ours := appendReports(nil, Channel, apdu)
		if len(ours) != reportCount(n)*ReportSize {
			t.Fatalf("%d bytes: %d reports, reportCount says %d", n, len(ours)/ReportSize, reportCount(n))
		}
		d := newDeframer(Channel)
		var done bool
		for off := 0; off < len(ours); off += ReportSize {
			var err error
			if done, err = d.add(ours[off : off+ReportSize]); err != nil {
				t.Fatalf("%d bytes, report %d: %v", n, off/ReportSize, err)
			}
		}
		if !done || !bytes.Equal(d.buf, apdu) {
			t.Fatalf("%d bytes: deframed to %x (done %v)", n, d.buf, done)
		}
	}
}

func TestDeframerDiscards(t *testing.T) {
	resp := make([]byte, 100)
	reports := appendReports(nil, Channel, resp)
	first, second := reports[:ReportSize], reports[ReportSize:]
	mutate := func(r []byte, f func([]byte)) []byte {
		c := append([]byte(nil), r...)
		f(c)
		return c
	}
	for _, tc := range []struct {
		name   string
		report []byte
		want   error
	}{
		{"short", first[:4], errShortReport},
		{"first without length", first[:6], errShortReport},
		{"wrong channel", mutate(first, func(r []byte) { r[1] = 2 }), errWrongChannel},
		{"wrong tag", mutate(first, func(r []byte) { r[2] = 2 }), errWrongTag},
		{"continuation first", second, errWrongSequence},
		{"impossible length", mutate(first, func(r []byte) { binary.BigEndian.PutUint16(r[5:], 4000) }), errBadLength},
	} {
		d := newDeframer(Channel)
		if _, err := d.add(tc.report); !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
		// The deframer is unchanged: the real reply still goes through.
		if done, err := d.add(first); done || err != nil {
			t.Fatalf("%s: first report after a discard: %v, %v", tc.name, done, err)
		}
		if done, err := d.add(second); !done || err != nil || !bytes.Equal(d.buf, resp) {
			t.Fatalf("%s: second report after a discard: %v, %v", tc.name, done, err)
		}
	}
	d := newDeframer(Channel)
	d.add(first)
	if _, err := d.add(mutate(second, func(r []byte) { r[4] = 2 })); !errors.Is(err, errWrongSequence) {
		t.Errorf("skipped sequence number: got %v", err)
	}
}

// FuzzHIDDeframer feeds arbitrary reports: the deframer must not panic,
// never complete more bytes than announced, and rebuild what it completes
// from our own framing.
func FuzzHIDDeframer(f *testing.F) {
	f.Add(appendReports(nil, Channel, []byte{0x90, 0x00}))
	f.Add(appendReports(nil, Channel, make([]byte, 66)))
	f.Add(appendReports(nil, Channel, make([]byte, 260)))
	f.Add(appendReports(nil, 0x0202, []byte{0x90, 0x00}))
	f.Add([]byte{1, 1, 5, 0, 0, 0xff, 0xff})
	f.Add([]byte{1, 1, 5, 0, 1})
	f.Fuzz(func(t *testing.T, stream []byte) {
		d := newDeframer(Channel)
		for off := 0; off < len(stream); off += ReportSize {
			done, err := d.add(stream[off:min(off+ReportSize, len(stream))])
			if err != nil {
				continue
			}
			if len(d.buf) > d.want || d.want > maxResponse {
				t.Fatalf("buffer %d bytes for %d announced", len(d.buf), d.want)
			}
			if done {
				again := newDeframer(Channel)
				r := appendReports(nil, Channel, d.buf)
				var ok bool
				for o := 0; o < len(r); o += ReportSize {
					ok, _ = again.add(r[o : o+ReportSize])
				}
				if !ok || !bytes.Equal(again.buf, d.buf) {
					t.Fatalf("reframed %x does not deframe to itself", d.buf)
				}
				return
			}
		}
	})
}

func TestStatusErrorUnwraps(t *testing.T) {
	for sw, want := range map[uint16]error{
		0x6986: signer.ErrRejected,
		0x6985: signer.ErrDoubleSign,
		0x6984: signer.ErrInvalidMessage,
		0x6983: signer.ErrMessageTooLarge,
		0x6E00: signer.ErrAppNotOpen,
		0x5515: signer.ErrDeviceLocked,
		0x6D00: signer.ErrUnsupported,
		0x6F00: signer.ErrProtocol,
	} {
		_, err := splitResponse(INSSignEd25519, []byte{7, byte(sw >> 8), byte(sw)})
		var se *StatusError
		if !errors.As(err, &se) || se.SW != sw || !errors.Is(err, want) {
			t.Errorf("0x%04X: got %v, want a *StatusError wrapping %v", sw, err, want)
		}
		if sw == 0x6984 && se.ParseError != ParseUnexpectedBufferSize {
			t.Errorf("0x6984: parse error %d, want 7", se.ParseError)
		}
	}
}
