package report

import (
	"context"
	"testing"
	"time"

	"github.com/signerkit/signerkit/internal/bench"
)

// TestOpenPGPFidelity checks that the openpgp-* rows reproduce the keycard
// benchmark's figures (docs/latency-profiles.md §7) within 5 %: the row's
// modeled time (the card's operation plus 2 ms per APDU) against the
// figure the finding gives. The 5 % bound does not tell one APDU from two
// (4 ms against 200 ms).
func TestOpenPGPFidelity(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a 4096-bit RSA key")
	}
	cfg := RunConfig{RowBudget: 5 * time.Millisecond, MinSigns: 2, MaxSigns: 20}
	cases := []struct {
		backend string
		ms      float64 // the finding's figure
		finding string
	}{
		{"openpgp-yubikey4-rsa2048", 200, "ten times the CPU's (an assumed 20 ms gpg decryption)"},
		{"openpgp-yubikey4-rsa4096", 2000, "ten times the YubiKey 4 at 2048 bits"},
		{"openpgp-yubikey-neo-rsa2048", 2000, "as slow as the YubiKey 4 at 4096 bits"},
		{"openpgp-fst01-rsa2048", 1100, "more than a second"},
		{"openpgp-fst01-rsa4096", 8000, "about 8 s"},
		{"openpgp-nitrokey-start-rsa4096", 8000, "the FST-01's firmware and chip"},
		// PSO:DECIPHER, one APDU (PW1 in mode 82 stays verified): what
		// the benchmark timed.
		{"openpgp-yubikey4-rsa2048-decipher", 200, "ten times the CPU's (an assumed 20 ms gpg decryption)"},
		{"openpgp-yubikey4-rsa4096-decipher", 2000, "ten times the YubiKey 4 at 2048 bits"},
		{"openpgp-yubikey-neo-rsa2048-decipher", 2000, "as slow as the YubiKey 4 at 4096 bits"},
		{"openpgp-fst01-rsa2048-decipher", 1100, "more than a second"},
		{"openpgp-fst01-rsa4096-decipher", 8000, "about 8 s"},
	}
	for _, c := range cases {
		row, err := RunRow(context.Background(), backend(t, c.backend), bench.Params{Payload: 32}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if m := row.ModeledMs; m < c.ms*0.95 || m > c.ms*1.05 {
			t.Errorf("%s: modeled %.1f ms, want %.0f ms ± 5%% (%s)", c.backend, m, c.ms, c.finding)
		}
	}
}
