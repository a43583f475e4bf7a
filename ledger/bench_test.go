package ledger_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/ledger/ledgersim"
)

// okDevice answers every APDU with one report carrying 90 00: the host
// side of HIDTransport with no device work at all.
type okDevice struct{ pending int }

var okReport = func() []byte {
	r := make([]byte, ledger.ReportSize)
	copy(r, []byte{0x01, 0x01, 0x05, 0x00, 0x00, 0x00, 0x02, 0x90, 0x00})
	return r
}()

func (d *okDevice) WriteReport(_ context.Context, r []byte) error {
	if r[3] == 0 && r[4] == 0 {
		d.pending++
	}
	return nil
}

func (d *okDevice) ReadReport(ctx context.Context, b []byte) (int, error) {
	if d.pending == 0 {
		return 0, ctx.Err()
	}
	d.pending--
	return copy(b, okReport), nil
}

func (d *okDevice) Close() error { return nil }

// BenchmarkHIDExchange is the host-side cost of one APDU through our HID
// transport (ns/op with no modeled time): an intermediate SIGN_ED25519
// chunk of each size, against a device that answers at once
// (device=none), and against the simulator's HID face (device=ledgersim,
// which also buffers the chunk).
func BenchmarkHIDExchange(b *testing.B) {
	for _, chunk := range []int{32, 128, 250} {
		apdu := append([]byte{ledger.CLA, ledger.INSSignEd25519, 1, 2, byte(chunk)}, make([]byte, chunk)...)
		b.Run(fmt.Sprintf("device=none/chunk=%d", chunk), func(b *testing.B) {
			t := ledger.NewHIDTransport(&okDevice{})
			benchExchange(b, t, apdu)
		})
		b.Run(fmt.Sprintf("device=ledgersim/chunk=%d", chunk), func(b *testing.B) {
			dev := ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Accounted})
			port, err := dev.OpenHID()
			if err != nil {
				b.Fatal(err)
			}
			benchExchange(b, ledger.NewHIDTransport(port), apdu)
		})
	}
}

func benchExchange(b *testing.B, t *ledger.HIDTransport, apdu []byte) {
	defer t.Close()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		resp, err := t.Exchange(ctx, apdu)
		if err != nil || len(resp) != 2 || resp[0] != 0x90 {
			b.Fatalf("%x, %v", resp, err)
		}
	}
}
