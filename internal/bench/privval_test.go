package bench_test

import (
	"context"
	"strings"
	"testing"

	"github.com/signerkit/signerkit/internal/bench"
)

// TestPrivvalRows signs a few votes on every remote-signer row and checks
// the metrics it keeps: one guard sync per sign, time added and time of
// the backend's own sign both counted, and a clean close.
func TestPrivvalRows(t *testing.T) {
	n := 0
	for _, be := range bench.Backends() {
		if !strings.HasPrefix(be.Name, "privval-") {
			continue
		}
		n++
		t.Run(be.Name, func(t *testing.T) {
			ctx := context.Background()
			inst, err := be.Open(ctx, bench.Params{Payload: 108})
			if err != nil {
				t.Fatal(err)
			}
			next := be.MessageSource(108)
			if _, err := inst.Sign(ctx, next()); err != nil { // creates the state
				t.Fatal(err)
			}
			before := inst.Metrics()
			const signs = 3
			for range signs {
				msg := next()
				sig, err := inst.Sign(ctx, msg)
				if err != nil {
					t.Fatal(err)
				}
				if err := inst.Verify(be, msg, sig); err != nil {
					t.Fatal(err)
				}
			}
			after := inst.Metrics()
			if d := after["fsync"] - before["fsync"]; d != signs {
				t.Errorf("%v syncs for %d signs", d, signs)
			}
			for _, k := range []string{"added-ms", "backend-ms"} {
				if after[k] <= before[k] {
					t.Errorf("%s did not grow: %v → %v", k, before[k], after[k])
				}
			}
			if strings.HasSuffix(be.Name, "-durable") && after["fsync-ms"] <= before["fsync-ms"] {
				t.Errorf("fsync-ms did not grow on disk: %v → %v", before["fsync-ms"], after["fsync-ms"])
			}
			if err := inst.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
	if n != 8 {
		t.Errorf("%d privval rows registered, want 8", n)
	}
}
