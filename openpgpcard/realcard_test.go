package openpgpcard_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/signerkit/signerkit/openpgpcard"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

// TestRealCard runs the conformance suite on a real card's signature key
// when SIGNERKIT_OPENPGPCARD names its reader (any part of the name, or
// "pcsc" for the first OpenPGP card), with PW1 from
// SIGNERKIT_OPENPGPCARD_PIN. It signs many times: the card's signature
// counter goes up.
func TestRealCard(t *testing.T) {
	reader := os.Getenv("SIGNERKIT_OPENPGPCARD")
	if reader == "" {
		t.Skip("SIGNERKIT_OPENPGPCARD is not set: no real card")
	}
	if reader == "pcsc" {
		reader = ""
	}
	cfg := openpgpcard.Config{Reader: reader, PIN: signer.SecretEnv("SIGNERKIT_OPENPGPCARD_PIN")}
	signertest.Run(t, func() (signer.Signer, error) {
		return openpgpcard.Open(context.Background(), cfg)
	}, signertest.Options{Concurrency: 2, Timeout: time.Minute, MaxMessage: 1024})
}
