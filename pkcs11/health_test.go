//go:build cgo

package pkcs11_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/signerkit/signerkit/pkcs11"
	"github.com/signerkit/signerkit/signer"
)

func TestHealth(t *testing.T) {
	st, tok := openToken(t, pkcs11.WithFaults)
	k := generateKey(t, tok, signer.Ed25519, "health")
	var h signer.HealthChecker = k
	ctx := context.Background()
	if err := h.Health(ctx); err != nil {
		t.Fatalf("Health: %v", err)
	}
	signAndVerify(t, k)

	t.Run("SessionsClosed", func(t *testing.T) {
		// Someone else closes every session of the application (and
		// logs the token out): Health opens a new one.
		if err := otherHandle(t, st).CloseAllSessions(tok.SlotID()); err != nil {
			t.Fatal(err)
		}
		if err := h.Health(ctx); err != nil {
			t.Fatalf("Health after C_CloseAllSessions: %v", err)
		}
		signAndVerify(t, k)
	})
	t.Run("Hung", func(t *testing.T) {
		release := tok.Hang()
		const deadline = 300 * time.Millisecond
		start := time.Now() // before the deadline is set, which counts from its own clock reading
		hctx, cancel := context.WithTimeout(ctx, deadline)
		defer cancel()
		err := h.Health(hctx)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Health on a hung token = %v, want DeadlineExceeded", err)
		}
		if took := time.Since(start); took < deadline {
			t.Errorf("Health gave up after %v, before its %v deadline", took, deadline)
		}
		release()
		if err := h.Health(ctx); err != nil {
			t.Fatalf("Health after the hang: %v", err)
		}
	})
	t.Run("Closed", func(t *testing.T) {
		k.Close()
		err := h.Health(ctx)
		if !errors.Is(err, signer.ErrClosed) || strings.Count(err.Error(), "pkcs11: ") != 1 {
			t.Fatalf("Health after Close = %v, want ErrClosed with the prefix once", err)
		}
	})
}
