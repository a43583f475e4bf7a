package signerkit_test

import (
	"fmt"
	"testing"

	"github.com/signerkit/signerkit/internal/bench"
)

// BenchmarkVerify measures every registered verification case (see
// internal/bench/verify.go) over its payloads:
// BenchmarkVerify/alg=<name>/payload=<bytes>. Each row times the library's
// verify call alone, on a signature made before the clock starts.
func BenchmarkVerify(b *testing.B) {
	for _, c := range bench.VerifyCases() {
		b.Run("alg="+c.Name, func(b *testing.B) {
			if reason := c.SkipReason(); reason != "" {
				b.Skip(reason)
			}
			for _, size := range c.Sizes() {
				b.Run(fmt.Sprintf("payload=%d", size), func(b *testing.B) { bench.Verify(b, c, size) })
			}
		})
	}
}
