package thresholdbench

import (
	"crypto/rand"
	"testing"

	"github.com/signerkit/signerkit/threshold/frost"
)

// DKGInProcess is the key generation row without a network: frost.RunDKG
// of a 2-of-3 key, every participant's rounds and checks in one goroutine.
// Its ns/op is the compute a DKG costs, all participants together.
func DKGInProcess(b *testing.B) {
	b.ReportAllocs()
	cpu0, ok := cpuTime()
	for b.Loop() {
		keys, pub, err := frost.RunDKG(2, 3, rand.Reader)
		if err != nil {
			b.Fatal(err)
		}
		if len(keys) != 3 || pub.MinSigners() != 2 {
			b.Fatalf("RunDKG made %d keys with threshold %d", len(keys), pub.MinSigners())
		}
		for _, k := range keys {
			k.Wipe()
		}
	}
	cpu1, _ := cpuTime()
	if ok && b.N > 0 {
		b.ReportMetric(float64(cpu1-cpu0)/1e6/float64(b.N), "cpu-ms/op")
	}
}
