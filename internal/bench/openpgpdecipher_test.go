package bench_test

import (
	"context"
	"strings"
	"testing"

	"github.com/signerkit/signerkit/internal/bench"
)

// TestDecipherRows runs every decipher row of the OpenPGP cards and its
// CPU row once at each payload (not the RSA 4096 ones in -short), and
// checks that a changed output fails the row's check: the
// check compares with the standard library, not with the row itself.
func TestDecipherRows(t *testing.T) {
	found := 0
	for _, be := range bench.Backends() {
		if !strings.HasSuffix(be.Name, "-decipher") {
			continue
		}
		found++
		if testing.Short() && strings.Contains(be.Name, "rsa4096") {
			continue // a 4096-bit key takes seconds to generate
		}
		for _, size := range be.Sizes() {
			inst, err := be.Open(context.Background(), bench.Params{Payload: size})
			if err != nil {
				t.Fatalf("%s: %v", be.Name, err)
			}
			in := be.MessageSource(size)()
			out, err := inst.Sign(context.Background(), in)
			if err != nil {
				t.Fatalf("%s, %d B: %v", be.Name, size, err)
			}
			if err := inst.Verify(be, in, out); err != nil {
				t.Errorf("%s, %d B: %v", be.Name, size, err)
			}
			if want := min(size, 501); strings.Contains(be.Name, "rsa") && len(out) != min(want, rsaMax(be.Name)) {
				t.Errorf("%s, %d B: %d bytes deciphered", be.Name, size, len(out))
			}
			out[len(out)-1] ^= 1
			if err := inst.Verify(be, in, out); err == nil {
				t.Errorf("%s, %d B: a changed output passes the check", be.Name, size)
			}
			if inst.Close != nil {
				inst.Close()
			}
		}
	}
	if found < 15 {
		t.Errorf("%d decipher rows, want the five tokens' and the CPU's", found)
	}
}

// rsaMax is the longest session key a row's RSA key carries.
func rsaMax(name string) int {
	if strings.Contains(name, "rsa4096") {
		return 512 - 11
	}
	return 256 - 11
}
