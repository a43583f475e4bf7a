package ledgergo_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log"

	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/ledger/ledgergo"
	"github.com/signerkit/signerkit/ledger/ledgersim"
	"github.com/signerkit/signerkit/signbytes/signbytestest"
	"github.com/signerkit/signerkit/signer"
)

// Dialer opens the first Ledger through ledger-go's own USB HID
// transport.
func ExampleDialer() {
	s, err := ledger.Open(context.Background(), ledger.Config{Dial: ledgergo.Dialer(0)})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	fmt.Printf("validator key %x\n", s.Public())
}

// Wrap puts any ledger-go LedgerDevice under a ledger.Signer: here a
// stand-in that answers as LedgerDeviceHID does, in front of the
// simulator.
func ExampleWrap() {
	ctx := context.Background()
	dev := ledgersim.MustNew(ledgersim.Config{})
	tr, err := dev.Transport()
	if err != nil {
		log.Fatal(err)
	}
	defer tr.Close() // Wrap's transport leaves the device to its owner
	up := upstreamSim{tr}
	s, err := ledger.Open(ctx, ledger.Config{Dial: func(context.Context) (ledger.Transport, error) {
		return ledgergo.Wrap(up), nil
	}})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	msg := signbytestest.NewHeights("test11", 100).Next(signbytestest.KindPrevote)
	sig, err := s.SignContext(ctx, msg)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("verifies:", ed25519.Verify(dev.PublicKey(), msg, sig))
	// The app's refusal comes back through ledger-go's error text as the
	// status word it was.
	_, err = s.SignContext(ctx, msg)
	var se *ledger.StatusError
	fmt.Println("double sign:", errors.Is(err, signer.ErrDoubleSign), errors.As(err, &se) && se.SW == 0x6985)
	// Output:
	// verifies: true
	// double sign: true true
}
