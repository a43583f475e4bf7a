package openpgpcard_test

import (
	"context"
	"crypto"
	"crypto/sha256"
	"errors"
	"testing"

	"github.com/signerkit/signerkit/openpgpcard"
	"github.com/signerkit/signerkit/signer"
)

// lyingTransport flips a bit in the data of every PSO:CDS response.
type lyingTransport struct{ openpgpcard.Transport }

func (l lyingTransport) Exchange(ctx context.Context, apdu []byte) ([]byte, error) {
	resp, err := l.Transport.Exchange(ctx, apdu)
	if err == nil && len(apdu) > 3 && apdu[1] == 0x2A && apdu[2] == 0x9E && len(resp) > 2 {
		resp[0] ^= 0x01
	}
	return resp, err
}

// TestCardSignatureIsVerified checks that a signature the card got wrong is
// never returned: SignContext and Sign refuse it with ErrProtocol, for
// each signing algorithm.
func TestCardSignatureIsVerified(t *testing.T) {
	t.Parallel()
	for _, a := range []openpgpcard.Attributes{openpgpcard.AttrEd25519, openpgpcard.AttrECDSAP256, openpgpcard.AttrRSA2048} {
		t.Run(a.String(), func(t *testing.T) {
			card := newCard(t, openpgpcard.KeySign, a)
			cfg := userConfig(card, openpgpcard.KeySign)
			cfg.Dial = func(ctx context.Context) (openpgpcard.Transport, error) {
				tr, err := card.Dialer()(ctx)
				return lyingTransport{tr}, err
			}
			s, err := openpgpcard.Open(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			msg := []byte("a message the card signs wrongly")
			if _, err := s.SignContext(context.Background(), msg); !errors.Is(err, signer.ErrProtocol) {
				t.Errorf("SignContext: got %v, want ErrProtocol", err)
			}
			digest, opts := msg, crypto.SignerOpts(crypto.Hash(0))
			if a != openpgpcard.AttrEd25519 {
				d := sha256.Sum256(msg)
				digest, opts = d[:], crypto.SHA256
			}
			if _, err := s.Sign(nil, digest, opts); !errors.Is(err, signer.ErrProtocol) {
				t.Errorf("Sign: got %v, want ErrProtocol", err)
			}
		})
	}
}
