package ledgersim_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/ledger/ledgersim"
)

// FuzzHIDFace writes arbitrary reports to the device's HID face: it must
// not panic, and a well-framed GET_VERSION afterwards is still answered.
func FuzzHIDFace(f *testing.F) {
	f.Add([]byte{0x01, 0x01, 0x05, 0x00, 0x00, 0x00, 0x05, 0x56, 0x00, 0x00, 0x00, 0x00})
	f.Add([]byte{0x01, 0x01, 0x05, 0x00, 0x00, 0xff, 0xff, 0x56})
	f.Add([]byte{0x01, 0x01, 0x05, 0x00, 0x01, 0x56})
	f.Add([]byte{0x01, 0x01, 0x02, 0x00, 0x00})
	f.Fuzz(func(t *testing.T, stream []byte) {
		dev := ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Accounted})
		port, err := dev.OpenHID()
		if err != nil {
			t.Fatal(err)
		}
		defer port.Close()
		ctx := context.Background()
		for off := 0; off < len(stream); off += 64 {
			port.WriteReport(ctx, stream[off:min(off+64, len(stream))])
		}
		// A fresh transport drains whatever the garbage produced.
		tr := ledger.NewHIDTransport(port)
		ectx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		resp, err := tr.Exchange(ectx, []byte{0x56, 0x00, 0x00, 0x00, 0x00})
		if err != nil || !bytes.Equal(resp, []byte{0, 0, 9, 1, 0x90, 0x00}) {
			t.Fatalf("GET_VERSION after garbage: %x, %v", resp, err)
		}
	})
}
