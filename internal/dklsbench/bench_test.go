package dklsbench

import (
	"fmt"
	"os"
	"testing"

	"github.com/signerkit/signerkit/internal/benchtime"
	"github.com/signerkit/signerkit/internal/thresholdbench"
)

// defaultBenchtime keeps `go test -bench=. ./...` within its budget, as in
// thresholdbench: pass -benchtime for figures to quote.
const defaultBenchtime = "100ms"

func TestMain(m *testing.M) {
	benchtime.Default(defaultBenchtime)
	os.Exit(m.Run())
}

// BenchmarkThreshold runs every row:
//
//	dkls23-2of3-secp256k1/sign/net=<profile>/inflight=<n>
//	dkls23-2of3-secp256k1/presign/inprocess
//	dkls23-2of3-secp256k1/presign/parallel
//	dkls23-2of3-secp256k1/presign/net=<profile>
//	dkls23-2of3-secp256k1/compute/steps
//	dkls23-2of3-secp256k1/keygen/inprocess
func BenchmarkThreshold(b *testing.B) {
	b.Run(Row, func(b *testing.B) {
		b.Run("sign", func(b *testing.B) {
			for _, n := range thresholdbench.Networks() {
				b.Run("net="+n.Name, func(b *testing.B) {
					f, err := NewFixture(n)
					if err != nil {
						b.Fatal(err)
					}
					defer f.Close()
					for _, k := range thresholdbench.InFlight {
						b.Run(fmt.Sprintf("inflight=%d", k), func(b *testing.B) { SignRow(b, f, k) })
					}
				})
			}
		})
		b.Run("presign/inprocess", PresignRow)
		b.Run("presign/parallel", PresignParallelRow)
		for _, n := range thresholdbench.Networks() {
			b.Run("presign/net="+n.Name, func(b *testing.B) { PresignNetRow(b, n) })
		}
		b.Run("compute/steps", ComputeRow)
		b.Run("keygen/inprocess", KeygenRow)
	})
}
