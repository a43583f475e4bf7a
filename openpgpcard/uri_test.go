package openpgpcard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/signerkit/signerkit/openpgpcard"
	"github.com/signerkit/signerkit/openpgpcard/cardsim"
	"github.com/signerkit/signerkit/signer"
)

func TestParseURI(t *testing.T) {
	t.Parallel()
	cfg, err := openpgpcard.ParseURI("openpgpcard:reader=Yubico;key=aut?pin-value=123456&sign-timeout=5s")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Reader != "Yubico" || cfg.Key != openpgpcard.KeyAuth || cfg.SignTimeout != 5*time.Second || cfg.PIN == nil {
		t.Fatalf("config %+v", cfg)
	}
	if pin, _ := cfg.PIN(); string(pin) != "123456" {
		t.Fatalf("PIN %q", pin)
	}
	cfg, err = openpgpcard.ParseURI("openpgpcard:")
	if err != nil || cfg.Key != openpgpcard.KeySign || cfg.Reader != "" || cfg.PIN != nil {
		t.Fatalf("openpgpcard: gives %+v, %v", cfg, err)
	}
	for _, bad := range []string{
		"ledger:", "openpgpcard:key=enc", "openpgpcard:reader=", "openpgpcard:slot=1",
		"openpgpcard:?sign-timeout=-1s", "openpgpcard:?pin-value=1&pin-source=env:X",
	} {
		_, err := openpgpcard.ParseURI(bad)
		var ue *signer.URIError
		if !errors.As(err, &ue) || !errors.Is(err, signer.ErrInvalidArgument) {
			t.Errorf("%q: got %v, want a *signer.URIError", bad, err)
		}
	}
}

// TestStore lists, opens and generates keys through the store, and opens
// the registered scheme with the caller's secret as PW1.
func TestStore(t *testing.T) {
	t.Parallel()
	card := newCard(t, openpgpcard.KeySign, openpgpcard.AttrECDSAP256)
	ctx := context.Background()
	cfg := userConfig(card, openpgpcard.KeySign)
	cfg.AdminPIN = signer.SecretBytes([]byte(cardsim.DefaultPW3))
	st, err := openpgpcard.OpenStore(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.GenerateKey(ctx, signer.Ed25519, "dec"); err != nil {
		t.Fatal(err)
	}
	keys, err := st.ListKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 || keys[0].Label != "dec" || keys[0].Algorithm != 0 || keys[1].Label != "sig" || keys[1].Algorithm != signer.ECDSAP256 {
		t.Fatalf("keys %+v", keys)
	}
	s, err := st.OpenKey(ctx, signer.KeyRef{Label: "sig"})
	if err != nil {
		t.Fatal(err)
	}
	signAndVerify(t, s.(*openpgpcard.Signer), []byte("from the store"))
	s.Close()
	if _, err := st.OpenKey(ctx, signer.KeyRef{Label: "aut"}); !errors.Is(err, signer.ErrKeyNotFound) {
		t.Errorf("empty aut slot: got %v, want ErrKeyNotFound", err)
	}
	if _, err := st.OpenKey(ctx, signer.KeyRef{Label: "sig", Algorithm: signer.Ed25519}); !errors.Is(err, signer.ErrUnsupported) {
		t.Errorf("sig as Ed25519: got %v, want ErrUnsupported", err)
	}
	if _, err := st.OpenKey(ctx, signer.KeyRef{Label: "other"}); !errors.Is(err, signer.ErrKeyNotFound) {
		t.Errorf("unknown label: got %v", err)
	}
	if _, err := st.GenerateKey(ctx, signer.ECDSASecp256k1, "aut"); !errors.Is(err, signer.ErrUnsupported) {
		t.Errorf("secp256k1: got %v, want ErrUnsupported", err)
	}
	st.Close()
	if _, err := st.ListKeys(ctx); !errors.Is(err, signer.ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
}

func TestHealth(t *testing.T) {
	t.Parallel()
	card := newCard(t, openpgpcard.KeySign, openpgpcard.AttrEd25519)
	s, err := openpgpcard.Open(context.Background(), userConfig(card, openpgpcard.KeySign))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Health(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The key replaced by another algorithm: health says so.
	admin := openpgpcard.Config{Dial: card.Dialer(), AdminPIN: signer.SecretBytes([]byte(cardsim.DefaultPW3))}
	if _, err := openpgpcard.Generate(context.Background(), admin, openpgpcard.KeySign, openpgpcard.AttrECDSAP256); err != nil {
		t.Fatal(err)
	}
	if err := s.Health(context.Background()); !errors.Is(err, signer.ErrKeyNotFound) {
		t.Fatalf("after the key changed: %v, want ErrKeyNotFound", err)
	}
	card.Remove()
	if err := s.Health(context.Background()); !errors.Is(err, signer.ErrDisconnected) && !errors.Is(err, signer.ErrDeviceNotFound) {
		t.Fatalf("card removed: %v", err)
	}
	s.Close()
	if err := s.Health(context.Background()); !errors.Is(err, signer.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}
