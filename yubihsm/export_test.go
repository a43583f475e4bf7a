package yubihsm

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/yubihsm/yubihsmsim"
)

// Helpers shared by the package's internal tests and its yubihsm_test
// tests.

// CountRetries returns a context whose trace counts retries.
func CountRetries(ctx context.Context) (context.Context, *atomic.Int64) {
	var retries atomic.Int64
	return signer.WithTrace(ctx, &signer.Trace{Count: func(c signer.Counter, n int64) {
		if c == signer.CountRetries {
			retries.Add(n)
		}
	}}), &retries
}

// WaitOpenSessions gives the sessions a pool drops in the background up to
// 5 s to be closed on dev, then fails t unless want are open; which says
// which those are.
func WaitOpenSessions(t testing.TB, dev *yubihsmsim.Device, want int, which string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for dev.OpenSessions() > want && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := dev.OpenSessions(); n != want {
		t.Errorf("%d sessions open, want %d (%s): dropped sessions must be closed, not left to expire", n, want, which)
	}
}
