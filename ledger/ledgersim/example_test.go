package ledgersim_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/signerkit/signerkit/internal/tm2"
	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/ledger/ledgersim"
	"github.com/signerkit/signerkit/signer"
)

// A test unplugs the simulated device in the middle of a sign, and the
// signer recovers once it is back.
func ExampleDevice_Inject() {
	dev := ledgersim.MustNew(ledgersim.Config{})
	s, err := ledger.New(context.Background(), dev.HIDDialer(), ledger.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	heights := tm2.NewHeights("", 1)

	dev.Inject(ledgersim.FaultUnplug)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err = s.SignContext(ctx, heights.Next(tm2.KindPrevote))
	fmt.Println("unplugged:", errors.Is(err, signer.ErrDisconnected))

	dev.Replug() // the app restarts: the next sign is confirmed again
	msg := heights.Next(tm2.KindPrevote)
	sig, err := s.SignContext(ctx, msg)
	fmt.Println("after replug:", err == nil && signer.Ed25519.Verify(s.Public(), msg, sig) == nil)
	// Output:
	// unplugged: true
	// after replug: true
}

// Raw mode signs any bytes; it is not the validator app.
func ExampleConfig_raw() {
	dev := ledgersim.MustNew(ledgersim.Config{Raw: true})
	s, err := ledger.New(context.Background(), dev.Dialer(), ledger.Config{ChunkSize: 64})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	col := signer.NewCollector()
	msg := make([]byte, 1024)
	sig, err := s.SignContext(col.WithContext(context.Background()), msg)
	fmt.Println(err == nil && signer.Ed25519.Verify(s.Public(), msg, sig) == nil, col.Summary().Count(signer.CountAPDUs), "APDUs")
	// Output: true 16 APDUs
}
