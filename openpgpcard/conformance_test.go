package openpgpcard_test

import (
	"context"
	"testing"
	"time"

	"github.com/signerkit/signerkit/openpgpcard"
	"github.com/signerkit/signerkit/openpgpcard/cardsim"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

// newCard returns a simulated card with a key generated on it, through
// the backend's own Generate, in slot k with attributes a.
func newCard(t testing.TB, k openpgpcard.Key, a openpgpcard.Attributes) *cardsim.Card {
	t.Helper()
	card := cardsim.New(cardsim.Config{Profile: cardsim.Instant})
	cfg := openpgpcard.Config{Dial: card.Dialer(), AdminPIN: signer.SecretBytes([]byte(cardsim.DefaultPW3))}
	if _, err := openpgpcard.Generate(context.Background(), cfg, k, a); err != nil {
		t.Fatalf("Generate %v in %v: %v", a, k, err)
	}
	return card
}

func userConfig(card *cardsim.Card, k openpgpcard.Key) openpgpcard.Config {
	return openpgpcard.Config{Dial: card.Dialer(), Key: k, PIN: signer.SecretBytes([]byte(cardsim.DefaultPW1))}
}

func TestConformance(t *testing.T) {
	t.Parallel()
	cases := []struct {
		key  openpgpcard.Key
		attr openpgpcard.Attributes
	}{
		{openpgpcard.KeySign, openpgpcard.AttrEd25519},
		{openpgpcard.KeySign, openpgpcard.AttrECDSAP256},
		{openpgpcard.KeySign, openpgpcard.AttrRSA2048},
		{openpgpcard.KeyAuth, openpgpcard.AttrEd25519},
		{openpgpcard.KeyAuth, openpgpcard.AttrECDSAP256},
	}
	for _, c := range cases {
		t.Run(c.key.String()+"-"+c.attr.String(), func(t *testing.T) {
			t.Parallel()
			card := newCard(t, c.key, c.attr)
			cfg := userConfig(card, c.key)
			opts := signertest.Options{Hang: card.Hang, Timeout: 10 * time.Second, Concurrency: 4}
			if c.attr == openpgpcard.AttrEd25519 {
				opts.MaxMessage = openpgpcard.MaxEdDSAMessage
			}
			signertest.Run(t, func() (signer.Signer, error) {
				return openpgpcard.Open(context.Background(), cfg)
			}, opts)
		})
	}
}
