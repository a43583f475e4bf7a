package ledgersim_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/ledger/ledgersim"
	"github.com/signerkit/signerkit/signbytes/signbytestest"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// A test unplugs the simulated device in the middle of a sign, and the
// signer recovers once it is back.
func ExampleDevice_Inject() {
	dev := ledgersim.MustNew(ledgersim.Config{})
	s, err := ledger.Open(context.Background(), ledger.Config{Dial: dev.HIDDialer()})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	heights := signbytestest.NewHeights("", 1)

	dev.Inject(ledgersim.FaultUnplug)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err = s.SignContext(ctx, heights.Next(signbytestest.KindPrevote))
	fmt.Println("unplugged:", errors.Is(err, signer.ErrDisconnected))

	dev.Replug() // the app restarts: the next sign is confirmed again
	msg := heights.Next(signbytestest.KindPrevote)
	sig, err := s.SignContext(ctx, msg)
	fmt.Println("after replug:", err == nil && ed25519.Verify(dev.PublicKey(), msg, sig))
	// Output:
	// unplugged: true
	// after replug: true
}

// Raw mode signs any bytes; it is not the validator app.
func ExampleConfig_raw() {
	dev := ledgersim.MustNew(ledgersim.Config{Raw: true})
	// Lift the client's limit, the validator app's 128 bytes.
	s, err := ledger.Open(context.Background(), ledger.Config{Dial: dev.Dialer(), ChunkSize: 64, MaxMessage: ledger.NoMessageLimit})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	col := signertrace.NewCollector()
	msg := make([]byte, 1024)
	sig, err := s.SignContext(col.WithContext(context.Background()), msg)
	fmt.Println(err == nil && ed25519.Verify(dev.PublicKey(), msg, sig), col.Summary().Count(signertrace.CountAPDUs), "APDUs")
	// Output: true 16 APDUs
}

// Any Speculos client reaches the simulator through its Speculos face;
// signer.Open does with a ledger: URI.
func ExampleDevice_ServeSpeculos() {
	dev := ledgersim.MustNew(ledgersim.Config{})
	srv, err := dev.ServeSpeculos()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	s, err := signer.Open(context.Background(), "ledger:speculos="+srv.Addr())
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	msg := signbytestest.NewHeights("test11", 1).Next(signbytestest.KindProposal)
	sig, err := s.SignContext(context.Background(), msg)
	fmt.Println(err == nil && ed25519.Verify(dev.PublicKey(), msg, sig))
	// Output: true
}
