package thresholdbench

import (
	"context"
	"os"
	"sync/atomic"
	"testing"
	"time"
)

// TestSoak holds 200 signs in flight under the transatlantic profile for
// SIGNERKIT_FROST_SOAK (a duration such as 60s; unset skips the test), with
// the parties' nonces in files synced before each share, and requires no
// failed sign, every signature verified with crypto/ed25519 and no invalid
// share from any (honest) party.
func TestSoak(t *testing.T) {
	v := os.Getenv("SIGNERKIT_FROST_SOAK")
	if v == "" {
		t.Skip("set SIGNERKIT_FROST_SOAK=60s to run the 200-in-flight transatlantic soak")
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		t.Fatalf("SIGNERKIT_FROST_SOAK=%q: want a positive duration such as 60s", v)
	}
	n, _ := NetworkNamed("transatlantic")
	f, err := Start(context.Background(), Config{Net: n, NonceDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var height atomic.Int64
	height.Store(FirstHeight - 1)
	l := f.Run(context.Background(), 200, 0, d, &height)
	t.Logf("%d signs in %v (%.0f/s), every one verified with crypto/ed25519; %d errors; latency p50 %v, p99 %v, max %v; %.2f shares per sign, %d failed party requests",
		l.Signs, l.Elapsed.Round(time.Millisecond), float64(l.Signs)/l.Elapsed.Seconds(), l.Errors,
		l.Percentile(0.5).Round(10*time.Microsecond), l.Percentile(0.99).Round(10*time.Microsecond), l.Percentile(1).Round(10*time.Microsecond),
		float64(l.Traffic.Shares)/float64(max(l.Signs, 1)), l.Traffic.Failures)
	for _, st := range f.Signer.Stats() {
		t.Logf("party %d: %d shares, %d failures (%d timeouts), %d bad shares, pool %d", st.ID, st.Shares, st.Failures, st.Timeouts, st.BadShares, st.Pool)
	}
	for _, e := range l.Distinct {
		t.Logf("failure: %v", e)
	}
	for _, st := range f.Signer.Stats() {
		if st.BadShares > 0 {
			t.Errorf("party %d, an honest party, sent %d shares that did not verify", st.ID, st.BadShares)
		}
	}
	if l.Errors > 0 {
		t.Fatalf("%d signs failed or did not verify; the first: %v", l.Errors, l.FirstErr)
	}
	if l.Signs == 0 {
		t.Fatal("no signature made")
	}
}
