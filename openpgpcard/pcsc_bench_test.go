//go:build cgo && linux

package openpgpcard_test

import (
	"context"
	"testing"

	"github.com/signerkit/signerkit/openpgpcard"
	"github.com/signerkit/signerkit/openpgpcard/cardsim"
	"github.com/signerkit/signerkit/signer"
)

// BenchmarkHostPCSC is BenchmarkHost's via=memory through pcsc-lite,
// pcscd and vpcd: what the PC/SC stack adds to a sign on the simulated
// card (it skips where pcscd or vpcd's driver is missing).
func BenchmarkHostPCSC(b *testing.B) {
	card := cardsim.New(cardsim.Config{Profile: cardsim.Instant})
	if err := card.ImportKey(cardsim.SlotSign, benchKey()); err != nil {
		b.Fatal(err)
	}
	startReader(b, card)
	s, err := openpgpcard.Open(context.Background(), openpgpcard.Config{Reader: "Virtual PCD", PIN: signer.SecretBytes([]byte(cardsim.DefaultPW1))})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	benchSign(b, s)
}
