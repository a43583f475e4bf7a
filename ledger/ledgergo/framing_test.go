package ledgergo_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	ledger_go "github.com/zondax/ledger-go"

	"github.com/signerkit/signerkit/ledger"
)

// scriptedHID is an HIDDevice that records the reports written to it and,
// once the whole command is in, queues the reply reports it was given.
type scriptedHID struct {
	writes  int // reports that make up the command
	written []byte
	reply   []byte
	queue   chan []byte
}

func (d *scriptedHID) WriteReport(_ context.Context, r []byte) error {
	d.written = append(d.written, r...)
	if len(d.written) == d.writes*ledger.ReportSize {
		for off := 0; off < len(d.reply); off += ledger.ReportSize {
			d.queue <- d.reply[off : off+ledger.ReportSize]
		}
	}
	return nil
}

func (d *scriptedHID) ReadReport(ctx context.Context, b []byte) (int, error) {
	select {
	case r := <-d.queue:
		return copy(b, r), nil
	default:
	}
	select {
	case r := <-d.queue:
		return copy(b, r), nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

func (d *scriptedHID) Close() error { return nil }

// exchange runs one ledger.HIDTransport exchange of cmd against a device
// that answers with theirReply (reports framed by ledger-go), and returns
// the reports the transport wrote and the response it read.
func exchange(t *testing.T, cmd, theirCmd, theirReply []byte) (written, resp []byte) {
	t.Helper()
	dev := &scriptedHID{writes: len(theirCmd) / ledger.ReportSize, reply: theirReply, queue: make(chan []byte, 8)}
	tr := ledger.NewHIDTransport(dev)
	defer tr.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := tr.Exchange(ctx, cmd)
	if err != nil {
		t.Fatalf("%d-byte command: %v", len(cmd), err)
	}
	return dev.written, resp
}

func pattern(n, mul int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*mul + 1)
	}
	return b
}

// ledger.HIDTransport frames commands of every length as zondax/ledger-go
// does (WrapCommandAPDU), byte for byte, and ledger-go unwraps them to the
// command; it reads replies of every length that ledger-go frames
// (docs/protocols.md A.8).
func TestFramingMatchesLedgerGo(t *testing.T) {
	ok := []byte{0x90, 0x00}
	theirOK, err := ledger_go.WrapCommandAPDU(ledger.Channel, ok, ledger.ReportSize)
	if err != nil {
		t.Fatal(err)
	}
	for n := 5; n <= 260; n++ {
		cmd := pattern(n, 7)
		theirs, err := ledger_go.WrapCommandAPDU(ledger.Channel, cmd, ledger.ReportSize)
		if err != nil {
			t.Fatal(err)
		}
		ours, resp := exchange(t, cmd, theirs, theirOK)
		if !bytes.Equal(ours, theirs) {
			t.Fatalf("%d-byte command: our reports differ from ledger-go's\nours   %x\ntheirs %x", n, ours, theirs)
		}
		if !bytes.Equal(resp, ok) {
			t.Fatalf("%d-byte command: response %x, want 9000", n, resp)
		}
		pipe := make(chan []byte, len(ours)/ledger.ReportSize)
		for off := 0; off < len(ours); off += ledger.ReportSize {
			pipe <- ours[off : off+ledger.ReportSize]
		}
		close(pipe)
		back, err := ledger_go.UnwrapResponseAPDU(ledger.Channel, pipe, ledger.ReportSize)
		if err != nil || !bytes.Equal(back, cmd) {
			t.Fatalf("%d-byte command: ledger-go unwraps our reports to %x, %v", n, back, err)
		}
	}
	cmd := []byte{ledger.CLA, ledger.INSGetVersion, 0, 0, 0}
	theirCmd, err := ledger_go.WrapCommandAPDU(ledger.Channel, cmd, ledger.ReportSize)
	if err != nil {
		t.Fatal(err)
	}
	for m := 2; m <= 260; m++ {
		want := pattern(m, 13)
		theirReply, err := ledger_go.WrapCommandAPDU(ledger.Channel, want, ledger.ReportSize)
		if err != nil {
			t.Fatal(err)
		}
		if _, resp := exchange(t, cmd, theirCmd, theirReply); !bytes.Equal(resp, want) {
			t.Fatalf("%d-byte reply framed by ledger-go: read %x", m, resp)
		}
	}
}
