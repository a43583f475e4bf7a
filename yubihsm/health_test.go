package yubihsm_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/yubihsm/yubihsmsim"
)

// healthFails checks that Health fails with an error wrapping want, and,
// for a hang, that it returned once its deadline passed and not before. A
// hang waits out its whole deadline, so it has a shorter one: its length
// is not what is checked.
func healthFails(t *testing.T, h signer.HealthChecker, what string, want error) {
	t.Helper()
	deadline := 300 * time.Millisecond
	if errors.Is(want, context.DeadlineExceeded) {
		deadline = 100 * time.Millisecond
	}
	start := time.Now() // before the deadline, which counts from its own clock reading
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	err := h.Health(ctx)
	if !errors.Is(err, want) {
		t.Fatalf("%s: Health = %v, want an error wrapping %v", what, err, want)
	}
	if errors.Is(want, context.DeadlineExceeded) && time.Since(start) < deadline {
		t.Errorf("%s: a hung device's Health returned after %v, before its %v deadline", what, time.Since(start), deadline)
	}
}

func TestHealth(t *testing.T) {
	dev := yubihsmsim.New(yubihsmsim.Config{})
	srv, err := yubihsmsim.NewServer(dev)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	k := openKey(t, srv.URL(), nil)
	var h signer.HealthChecker = k
	ctx := context.Background()

	before := dev.Stats()
	if err := h.Health(ctx); err != nil {
		t.Fatalf("Health: %v", err)
	}
	after := dev.Stats()
	if after.Echoes != before.Echoes+1 || after.Signs != before.Signs {
		t.Errorf("Health: %d echoes and %d signs, want 1 echo and no sign", after.Echoes-before.Echoes, after.Signs-before.Signs)
	}
	signOK(t, k, "after a health check")

	t.Run("ConnectorDown", func(t *testing.T) {
		if err := srv.Down(); err != nil {
			t.Fatal(err)
		}
		healthFails(t, h, "connector down", signer.ErrDisconnected)
		if err := srv.Up(); err != nil {
			t.Fatal(err)
		}
		if err := h.Health(ctx); err != nil {
			t.Fatalf("Health with the connector back: %v", err)
		}
	})
	t.Run("Unplugged", func(t *testing.T) {
		dev.Inject(yubihsmsim.FaultUnplugged, 0)
		healthFails(t, h, "unplugged", signer.ErrDisconnected)
		dev.Clear(yubihsmsim.FaultUnplugged)
		if err := h.Health(ctx); err != nil {
			t.Fatalf("Health with the device back: %v", err)
		}
		signOK(t, k, "device back")
	})
	t.Run("Hang", func(t *testing.T) {
		release := dev.Hang()
		healthFails(t, h, "hung device", context.DeadlineExceeded)
		release()
		if err := h.Health(ctx); err != nil {
			t.Fatalf("Health after the hang: %v", err)
		}
	})
	t.Run("Closed", func(t *testing.T) {
		k.Close()
		healthFails(t, h, "closed", signer.ErrClosed)
	})
}
