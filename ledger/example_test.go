package ledger_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/signerkit/signerkit/internal/tm2"
	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/ledger/ledgersim"
	"github.com/signerkit/signerkit/signer"
)

// A validator signs votes at rising heights through the HID transport,
// here against the simulator; Open(ctx, ledger.Config{}) does the same with
// the first Ledger plugged in.
func Example() {
	dev := ledgersim.MustNew(ledgersim.Config{Seed: bytes.Repeat([]byte{1}, 32)})
	s, err := ledger.New(context.Background(), dev.HIDDialer(), ledger.Config{ChunkSize: 32})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	fmt.Println("app", s.Version())

	heights := tm2.NewHeights("test11", 100)
	if _, err := s.SignContext(context.Background(), heights.Next(tm2.KindPrevote)); err != nil {
		log.Fatal(err) // the first sign is the one the user confirms
	}

	col := signer.NewCollector()
	vote := heights.Next(tm2.KindPrevote)
	sig, err := s.SignContext(col.WithContext(context.Background()), vote)
	if err != nil {
		log.Fatal(err)
	}
	sum := col.Summary()
	fmt.Printf("%d-byte vote: %d APDUs, %d HID reports, modeled device %v, wire %v\n",
		len(vote), sum.Count(signer.CountAPDUs), sum.Count(signer.CountHIDReports),
		sum.Stage(signer.StageDevice).Modeled, sum.Stage(signer.StageWire).Modeled)
	fmt.Println("valid:", signer.Ed25519.Verify(s.Public(), vote, sig) == nil)

	// The same bytes again are a double sign.
	_, err = s.SignContext(context.Background(), vote)
	var se *ledger.StatusError
	fmt.Println(errors.Is(err, signer.ErrDoubleSign), errors.As(err, &se) && se.SW == 0x6985)
	// Output:
	// app 0.9.1
	// 108-byte vote: 4 APDUs, 9 HID reports, modeled device 526ms, wire 9ms
	// valid: true
	// true true
}
