package yubihsm_test

import (
	"context"
	"crypto/ed25519"
	"flag"
	"os"
	"testing"

	"github.com/signerkit/signerkit/yubihsm/yubihsmsim"
)

// TestHundredThousandSigns signs 100,000 messages in a row through one
// Signer against the simulator (modeled time, accounted), across the
// message-limit rotations (every 9,000 commands), with no error allowed.
// It is skipped under -short, under -race (it takes minutes with the race
// detector) and in a benchmark run such as `go test -bench=. ./...` (it
// would add ~20 s to the suite's 3-minute budget) unless SIGNERKIT_LONG=1;
// CI runs it on its own (.ci/run).
func TestHundredThousandSigns(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	if raceEnabled && os.Getenv("SIGNERKIT_LONG") != "1" {
		t.Skip("under -race this takes minutes; set SIGNERKIT_LONG=1 to run it")
	}
	if f := flag.Lookup("test.bench"); f != nil && f.Value.String() != "" && os.Getenv("SIGNERKIT_LONG") != "1" {
		t.Skip("a benchmark run; run this test alone (go test -run TestHundredThousandSigns ./yubihsm/) or set SIGNERKIT_LONG=1")
	}
	const n = 100_000
	dev, url := sim(t, yubihsmsim.Config{})
	k := openKey(t, url, nil)
	before := dev.Stats().SessionsCreated
	ctx, retries := countRetries(context.Background())
	pub := k.Public().(ed25519.PublicKey)
	msg := make([]byte, 108)
	for i := range n {
		msg[0], msg[1], msg[2] = byte(i), byte(i>>8), byte(i>>16)
		sig, err := k.SignContext(ctx, msg)
		if err != nil {
			t.Fatalf("sign %d of %d: %v", i+1, n, err)
		}
		if !ed25519.Verify(pub, msg, sig) {
			t.Fatalf("sign %d: signature does not verify", i+1)
		}
	}
	rotations := dev.Stats().SessionsCreated - before
	t.Logf("%d signs, %d sessions, %d retries", n, rotations, retries.Load())
	if rotations < n/9000 {
		t.Errorf("%d sessions for %d signs: the message limit was not reached", rotations, n)
	}
	if retries.Load() != 0 {
		t.Errorf("%d retries: rotation must happen before the limit, not after a failure", retries.Load())
	}
}
