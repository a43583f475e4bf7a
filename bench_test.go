package signerkit_test

import (
	"fmt"
	"github.com/signerkit/signerkit/internal/benchtime"
	"os"
	"testing"

	"github.com/signerkit/signerkit/internal/bench"
)

// DefaultBenchtime is how long each row of BenchmarkSign and
// BenchmarkVerify runs unless -benchtime is given. The tables have
// hundreds of rows (backends × payloads × chunk sizes, algorithms ×
// payloads), and go test's default of 1 s a row would take the suite far
// past its budget of 3 minutes on a 2-core machine; at 50 ms a row an
// in-process Ed25519 sign still runs ~2,500 times, a simulated device's
// ~350. b.Loop runs a row for about this long whatever one operation costs
// (and at least once), so a 1 MiB row takes no longer than a 32-byte one;
// it only runs fewer times (an RSA-4096 sign some 5–10). For comparisons
// that need more, pass -benchtime and -count, as the figures quoted in the
// docs were.
const DefaultBenchtime = "50ms"

func TestMain(m *testing.M) {
	benchtime.Default(DefaultBenchtime)
	os.Exit(m.Run())
}

// BenchmarkSign measures every registered backend (see internal/bench) over
// the payload table: BenchmarkSign/backend=<name>/payload=<bytes>, with a
// chunk=<bytes> level for backends that have APDU chunk sizes.
func BenchmarkSign(b *testing.B) {
	for _, be := range bench.Backends() {
		b.Run("backend="+be.Name, func(b *testing.B) {
			if reason := be.SkipReason(); reason != "" {
				b.Skip(reason)
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
