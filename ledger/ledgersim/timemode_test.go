package ledgersim_test

import (
	"testing"

	"github.com/signerkit/signerkit/ledger/ledgersim"
)

// TestTimeModeFromEnv: the zero Config.Time honours SIGNERKIT_SIM, and an
// explicit mode overrides it.
func TestTimeModeFromEnv(t *testing.T) {
	for _, tc := range []struct {
		env        string
		mode, want ledgersim.TimeMode
	}{
		{"", ledgersim.TimeFromEnv, ledgersim.Accounted},
		{"accounted", ledgersim.TimeFromEnv, ledgersim.Accounted},
		{"realtime", ledgersim.TimeFromEnv, ledgersim.Realtime},
		{" RealTime ", ledgersim.TimeFromEnv, ledgersim.Realtime},
		{"realtime", ledgersim.Accounted, ledgersim.Accounted},
		{"", ledgersim.Realtime, ledgersim.Realtime},
	} {
		t.Setenv("SIGNERKIT_SIM", tc.env)
		if got := ledgersim.MustNew(ledgersim.Config{Time: tc.mode}).Time(); got != tc.want {
			t.Errorf("SIGNERKIT_SIM=%q, Config.Time %d: Time() = %d, want %d", tc.env, tc.mode, got, tc.want)
		}
	}
}
