package ed25519sign

import (
	"crypto/ed25519"
	"os"
	"slices"
	"testing"
	"time"
)

// TestSpeedRatio times this package's Sign against ed25519.Sign in
// interleaved batches and reports the median ratio, which a loaded
// machine disturbs far less than separate benchmark runs. It runs only
// with ED25519SIGN_RATIO=1.
func TestSpeedRatio(t *testing.T) {
	if os.Getenv("ED25519SIGN_RATIO") == "" {
		t.Skip("set ED25519SIGN_RATIO=1")
	}
	for _, n := range []int{32, 128, 1024} {
		msg := make([]byte, n)
		seed := make([]byte, 32)
		std := ed25519.NewKeyFromSeed(seed)
		k, free := NewLocked()
		k.SetSeed(seed)
		var ratios, seedRatios []float64
		for range 200 {
			t0 := time.Now()
			for range 50 {
				ed25519.Sign(std, msg)
			}
			t1 := time.Now()
			for range 50 {
				k.Sign(msg)
			}
			t2 := time.Now()
			for range 50 {
				SignSeed(seed, msg)
			}
			t3 := time.Now()
			ratios = append(ratios, float64(t2.Sub(t1))/float64(t1.Sub(t0)))
			seedRatios = append(seedRatios, float64(t3.Sub(t2))/float64(t1.Sub(t0)))
		}
		free()
		slices.Sort(ratios)
		slices.Sort(seedRatios)
		t.Logf("%4d-byte message: Sign / ed25519.Sign median %.3f (quartiles %.3f–%.3f); SignSeed / ed25519.Sign median %.3f",
			n, ratios[len(ratios)/2], ratios[len(ratios)/4], ratios[3*len(ratios)/4], seedRatios[len(seedRatios)/2])
	}
}
