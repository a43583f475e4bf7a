package cardsim_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/signerkit/signerkit/openpgpcard/cardsim"
)

// pipe is a scripted vpcd connection: reads come from in, writes go to out.
type pipe struct {
	in  io.Reader
	out bytes.Buffer
}

func (p *pipe) Read(b []byte) (int, error)  { return p.in.Read(b) }
func (p *pipe) Write(b []byte) (int, error) { return p.out.Write(b) }

func TestServeVPCD(t *testing.T) {
	t.Parallel()
	card := cardsim.New(cardsim.Config{Profile: cardsim.Instant})
	sel := append([]byte{0x00, 0xA4, 0x04, 0x00, byte(len(cardsim.AID))}, cardsim.AID...)
	var in []byte
	in = cardsim.AppendFrame(in, []byte{0x01}) // power on
	in = cardsim.AppendFrame(in, []byte{0x04}) // get ATR
	in = cardsim.AppendFrame(in, sel)
	p := &pipe{in: bytes.NewReader(in)}
	if err := card.ServeVPCD(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	atr, err := cardsim.ReadFrame(&p.out)
	if err != nil || !bytes.Equal(atr, card.ATR()) {
		t.Fatalf("ATR frame %x, %v", atr, err)
	}
	resp, err := cardsim.ReadFrame(&p.out)
	if err != nil || !bytes.Equal(resp, []byte{0x90, 0x00}) {
		t.Fatalf("SELECT frame %x, %v", resp, err)
	}
	if p.out.Len() != 0 {
		t.Fatalf("%d bytes more than two frames: power on must not be answered", p.out.Len())
	}
}

func TestServeVPCDBadFrames(t *testing.T) {
	t.Parallel()
	for _, in := range [][]byte{{0x00}, {0x00, 0x00}, {0x00, 0x05, 1, 2}, {0x00, 0x01, 0x07}} {
		card := cardsim.New(cardsim.Config{Profile: cardsim.Instant})
		err := card.ServeVPCD(context.Background(), &pipe{in: bytes.NewReader(in)})
		if !errors.Is(err, cardsim.ErrFrame) {
			t.Errorf("stream %x: got %v, want ErrFrame", in, err)
		}
	}
}

// FuzzVPCD feeds any byte stream to the card as vpcd would: it never
// panics, answers every APDU frame with a response of at least a status
// word, and reports a malformed stream as ErrFrame.
func FuzzVPCD(f *testing.F) {
	sel := append([]byte{0x00, 0xA4, 0x04, 0x00, byte(len(cardsim.AID))}, cardsim.AID...)
	f.Add(cardsim.AppendFrame(cardsim.AppendFrame(nil, []byte{4}), sel))
	f.Add(cardsim.AppendFrame(cardsim.AppendFrame(nil, sel), []byte{0, 0x20, 0, 0x83, 8, '1', '2', '3', '4', '5', '6', '7', '8'}))
	f.Add(cardsim.AppendFrame(cardsim.AppendFrame(nil, sel), []byte{0x10, 0xDA, 0, 0x5B, 1, 'x'}))
	f.Add([]byte{0, 3, 0, 0xCA})
	f.Fuzz(func(t *testing.T, in []byte) {
		card := cardsim.New(cardsim.Config{Profile: cardsim.Instant})
		p := &pipe{in: bytes.NewReader(in)}
		err := card.ServeVPCD(context.Background(), p)
		if err != nil && !errors.Is(err, cardsim.ErrFrame) {
			t.Fatalf("error %v does not wrap ErrFrame", err)
		}
		for p.out.Len() > 0 {
			resp, err := cardsim.ReadFrame(&p.out)
			if err != nil || len(resp) < 2 {
				t.Fatalf("answer frame %x, %v", resp, err)
			}
		}
		pw1, pw3 := card.Tries()
		if pw1 > cardsim.MaxTries || pw3 > cardsim.MaxTries || pw1 < 0 || pw3 < 0 {
			t.Fatalf("counters %d %d", pw1, pw3)
		}
	})
}
