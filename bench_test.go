package signerkit_test

import (
	"fmt"
	"testing"

	"github.com/signerkit/signerkit/internal/bench"
)

// BenchmarkSign measures every registered backend (see internal/bench) over
// the payload table: BenchmarkSign/backend=<name>/payload=<bytes>, with a
// chunk=<bytes> level for backends that have APDU chunk sizes.
func BenchmarkSign(b *testing.B) {
	for _, be := range bench.Backends() {
		b.Run("backend="+be.Name, func(b *testing.B) {
			if be.Skip != nil {
				if reason := be.Skip(); reason != "" {
					b.Skip(reason)
				}
			}
			for _, size := range be.Sizes() {
				name := fmt.Sprintf("payload=%d", size)
				if len(be.Chunks) == 0 {
					b.Run(name, func(b *testing.B) { bench.Sign(b, be, bench.Params{Payload: size}) })
					continue
				}
				b.Run(name, func(b *testing.B) {
					for _, chunk := range be.Chunks {
						b.Run(fmt.Sprintf("chunk=%d", chunk), func(b *testing.B) {
							bench.Sign(b, be, bench.Params{Payload: size, Chunk: chunk})
						})
					}
				})
			}
		})
	}
}
