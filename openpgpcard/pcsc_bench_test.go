//go:build cgo && linux

package openpgpcard_test

import (
	"bufio"
	"context"
	"net"
	"testing"
	"time"

	"github.com/signerkit/signerkit/openpgpcard"
	"github.com/signerkit/signerkit/openpgpcard/cardsim"
	"github.com/signerkit/signerkit/signer"
)

// getPWStatus is GET DATA of the PW status bytes (C4): a command the card
// answers at once, with no cryptography, 7 bytes and 9000.
var getPWStatus = []byte{0x00, 0xCA, 0x00, 0xC4, 0x00}

// BenchmarkPCSCFloor measures, in one run, a sign through pcsc-lite, pcscd
// and vpcd beside the floor under it, on cards with no modeled time (an
// Ed25519 key; its PW1 status byte 01, so PW1 stays verified and a sign is
// one APDU):
//
//   - op=get-data/via=pcsc-bare: one SCardTransmit of GET DATA (C4) on the
//     caller's goroutine: pcsc-lite's client, pcscd, vpcd and the card's
//     socket, the least any command costs through this stack;
//   - op=get-data/via=pcsc: the same APDU through Transport.Exchange, as
//     this package sends it (the goroutine that lets a context bound it);
//   - op=get-data/via=vpcd-direct: the same APDU written straight to the
//     card's vpcd socket, no pcscd: what the socket alone costs;
//   - op=sign/via=pcsc: SignContext through pcsc-lite;
//   - op=sign/via=pcsc/pw1=each: the same on a card whose PW1 status byte
//     is 00, which wants VERIFY before every signature (two APDUs).
//
// BenchmarkHost has the in-memory sign and the card's own work to
// subtract; run both in one go test. docs/openpgpcard.md reports the
// figures: the host's cost of a sign over PC/SC is op=sign/via=pcsc less
// BenchmarkHost's card-only; this package's share of it is that less
// pcsc-bare.
func BenchmarkPCSCFloor(b *testing.B) {
	card := benchCard(b, true)
	startReader(b, card)
	b.Run("op=get-data/via=pcsc-bare", func(b *testing.B) {
		tr := dialSelected(b)
		for b.Loop() {
			if _, err := openpgpcard.BareTransmit(tr, getPWStatus); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("op=get-data/via=pcsc", func(b *testing.B) {
		tr := dialSelected(b)
		for b.Loop() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			_, err := tr.Exchange(ctx, getPWStatus)
			cancel()
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("op=get-data/via=vpcd-direct", func(b *testing.B) {
		exchange := vpcdDirect(b, benchCard(b, true))
		exchange(selectApp)
		for b.Loop() {
			exchange(getPWStatus)
		}
	})
	b.Run("op=sign/via=pcsc", func(b *testing.B) { benchSign(b, openPCSC(b)) })
	b.Run("op=sign/via=pcsc/pw1=each", func(b *testing.B) {
		setPW1Multi(b, card, false)
		defer setPW1Multi(b, card, true)
		benchSign(b, openPCSC(b))
	})
}

func openPCSC(b *testing.B) *openpgpcard.Signer {
	s, err := openpgpcard.Open(context.Background(), openpgpcard.Config{Reader: "Virtual PCD", PIN: signer.SecretBytes([]byte(cardsim.DefaultPW1))})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// dialSelected connects to the card through PC/SC and selects the
// application.
func dialSelected(b *testing.B) openpgpcard.Transport {
	tr, err := openpgpcard.PCSCDialer("Virtual PCD")(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { tr.Close() })
	if _, err := openpgpcard.BareTransmit(tr, selectApp); err != nil {
		b.Fatal(err)
	}
	return tr
}

// vpcdDirect stands where vpcd's reader driver stands: card dials it, and
// exchange sends one APDU as a vpcd frame and reads the response frame.
func vpcdDirect(b *testing.B, card *cardsim.Card) (exchange func(apdu []byte) []byte) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		card.DialVPCD(ctx, l.Addr().String(), 10*time.Millisecond, nil)
	}()
	conn, err := l.Accept()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close(); cancel(); <-done })
	r := bufio.NewReader(conn)
	var frame []byte
	return func(apdu []byte) []byte {
		frame = cardsim.AppendFrame(frame[:0], apdu)
		if _, err := conn.Write(frame); err != nil {
			b.Fatal(err)
		}
		resp, err := cardsim.ReadFrame(r)
		if err != nil {
			b.Fatal(err)
		}
		return resp
	}
}
