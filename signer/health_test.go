package signer_test

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// deviceKey is a key on a pretend device whose health is err.
type deviceKey struct {
	priv ed25519.PrivateKey
	err  error
	asks int
}

func (k *deviceKey) Public() crypto.PublicKey { return k.priv.Public() }
func (k *deviceKey) Close() error             { return nil }
func (k *deviceKey) Sign(_ io.Reader, msg []byte, _ crypto.SignerOpts) ([]byte, error) {
	return ed25519.Sign(k.priv, msg), nil
}
func (k *deviceKey) SignContext(_ context.Context, msg []byte) ([]byte, error) {
	return ed25519.Sign(k.priv, msg), nil
}
func (k *deviceKey) Health(context.Context) error { k.asks++; return k.err }

// plainKey has no device, and no Health.
type plainKey struct{ deviceKey }

func (plainKey) Health() {} // not a HealthChecker: another signature

func TestCheckHealth(t *testing.T) {
	priv := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	gone := fmt.Errorf("pretend: unplugged: %w", signer.ErrDisconnected)
	for _, c := range []struct {
		name   string
		s      signer.Signer
		ok     bool
		wantIs error
	}{
		{"healthy", &deviceKey{priv: priv}, true, nil},
		{"unplugged", &deviceKey{priv: priv, err: gone}, true, signer.ErrDisconnected},
		{"through Instrumented", signertrace.Instrument(&deviceKey{priv: priv, err: gone}), true, signer.ErrDisconnected},
		{"no device", &plainKey{deviceKey{priv: priv, err: gone}}, false, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			ok, err := signer.CheckHealth(context.Background(), c.s)
			if ok != c.ok {
				t.Errorf("ok = %v, want %v", ok, c.ok)
			}
			if c.wantIs == nil && err != nil || c.wantIs != nil && !errors.Is(err, c.wantIs) {
				t.Errorf("err = %v, want %v", err, c.wantIs)
			}
		})
	}
	k := &deviceKey{priv: priv}
	var _ signer.HealthChecker = k
	if _, err := signer.CheckHealth(context.Background(), k); err != nil || k.asks != 1 {
		t.Fatalf("CheckHealth asked the device %d times (err %v), want once", k.asks, err)
	}
}
