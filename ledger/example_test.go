package ledger_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log"

	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/ledger/ledgersim"
	"github.com/signerkit/signerkit/signbytes/signbytestest"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// A validator signs votes at rising heights through the HID transport,
// here against the simulator's HID face; Open(ctx, ledger.Config{}) does
// the same with the first Ledger plugged in.
func Example() {
	dev := ledgersim.MustNew(ledgersim.Config{Seed: bytes.Repeat([]byte{1}, 32)})
	s, err := ledger.Open(context.Background(), ledger.Config{Dial: dev.HIDDialer(), ChunkSize: 32})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	fmt.Println("app", s.Version())

	heights := signbytestest.NewHeights("test11", 100)
	if _, err := s.SignContext(context.Background(), heights.Next(signbytestest.KindPrevote)); err != nil {
		log.Fatal(err) // the first sign is the one the user confirms
	}

	col := signertrace.NewCollector()
	vote := heights.Next(signbytestest.KindPrevote)
	sig, err := s.SignContext(col.WithContext(context.Background()), vote)
	if err != nil {
		log.Fatal(err)
	}
	sum := col.Summary()
	fmt.Printf("%d-byte vote: %d APDUs, %d HID reports, modeled device %v, wire %v\n",
		len(vote), sum.Count(signertrace.CountAPDUs), sum.Count(signertrace.CountHIDReports),
		sum.Stage(signertrace.StageDevice).Modeled, sum.Stage(signertrace.StageWire).Modeled)
	fmt.Println("valid:", ed25519.Verify(dev.PublicKey(), vote, sig))

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

// signer.Open opens a Ledger from a URI once this package is imported:
// "ledger:" alone is the first Ledger over USB HID. Here the URI names the
// simulator's Speculos-compatible server.
func Example_uri() {
	dev := ledgersim.MustNew(ledgersim.Config{})
	srv, err := dev.ServeSpeculos()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	s, err := signer.Open(context.Background(), "ledger:speculos="+srv.Addr()+"?chunk-size=64&min-version=0.9.0")
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	alg, _ := signer.AlgorithmOf(s)
	msg := signbytestest.NewHeights("test11", 1).Next(signbytestest.KindPrecommit)
	sig, err := s.SignContext(context.Background(), msg)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(alg, ed25519.Verify(dev.PublicKey(), msg, sig))

	// A URI that cannot be used says which attribute is at fault.
	_, err = signer.Open(context.Background(), "ledger:hid=/dev/hidraw3?chunk-size=251")
	var ue *signer.URIError
	fmt.Println(errors.As(err, &ue), ue.Attr)
	// Output:
	// ed25519 true
	// true chunk-size
}

// The device as a key store: one Ed25519 key, which OpenKey opens.
func ExampleOpenStore() {
	dev := ledgersim.MustNew(ledgersim.Config{Seed: bytes.Repeat([]byte{1}, 32)})
	ctx := context.Background()
	st, err := ledger.OpenStore(ctx, ledger.Config{Dial: dev.Dialer()})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	keys, err := st.ListKeys(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, k := range keys {
		fmt.Printf("%q %v id %s…\n", k.Label, k.Algorithm, k.ID[:16])
	}
	s, err := st.OpenKey(ctx, keys[0].Ref())
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	fmt.Println(s.Public().(ed25519.PublicKey).Equal(keys[0].Public))
	// Output:
	// "" ed25519 id 8a88e3dd7409f195…
	// true
}
