package thresholdbench

import (
	"context"
	"flag"
	"fmt"
	"github.com/signerkit/signerkit/internal/benchtime"
	"os"
	"sync/atomic"
	"testing"

	"github.com/signerkit/signerkit/guard"
)

// smokePool is the pool of commitments per party when the rows run once
// each (-benchtime 1x, as CI's smoke run does): filling the measuring pool
// of DefaultPoolSize takes each fixture about a second of CPU, for rows
// that then sign once.
const smokePool = 64

// defaultBenchtime is how long each row runs unless -benchtime is given:
// `go test -bench=. ./...` runs every row of the repository within its
// budget of a few minutes on a 2-core machine, and go's default of 1 s a
// row would spend over a minute here alone. Pass -benchtime (and -count)
// for figures to quote; the report runs its rows at 1 s.
const defaultBenchtime = "100ms"

// defaultPool is the pool of commitments per party at the default
// benchtime: enough for 200 signs in flight, and filled in a fraction of
// the time DefaultPoolSize takes.
const defaultPool = 512

// benchtimeDefaulted records that TestMain set the benchtime.
var benchtimeDefaulted bool

func TestMain(m *testing.M) {
	benchtimeDefaulted = benchtime.Default(defaultBenchtime)
	os.Exit(m.Run())
}

// poolSize returns the pool size for the sign rows' fixtures.
func poolSize() int {
	if f := flag.Lookup("test.benchtime"); f != nil && f.Value.String() == "1x" {
		return smokePool
	}
	if benchtimeDefaulted {
		return defaultPool
	}
	return DefaultPoolSize
}

// BenchmarkThreshold runs every row. In the sign rows each party keeps its
// nonces in memory (store=mem), which leaves out the storage, or in a file
// synced before each share leaves it (store=dir), as deployed:
//
//	frost-2of3-ed25519/sign/store=mem/net=<profile>/inflight=<n>
//	frost-2of3-ed25519/sign/store=dir/net=<same-zone|transatlantic>/inflight=<n>
//	frost-2of3-ed25519/echo/net=<profile>
//	frost-2of3-ed25519/presign/commit
//	frost-2of3-ed25519/presign/store=<mem|dir>/batch=<n>
//	frost-2of3-ed25519/presign/net=<profile>/batch=<n>
//	frost-2of3-ed25519/compute/<party-share|coordinator-commitment|coordinator-aggregate>
//	frost-2of3-ed25519/dkg/inprocess
//	frost-2of3-ed25519/dkg/net=<profile>
func BenchmarkThreshold(b *testing.B) {
	b.Run(Row, func(b *testing.B) {
		b.Run("sign", func(b *testing.B) {
			for _, store := range []string{"mem", "dir"} {
				b.Run("store="+store, func(b *testing.B) {
					for _, n := range Networks() {
						if store == "dir" && n.Name != "same-zone" && n.Name != "transatlantic" {
							continue // the file's cost is the same on every network
						}
						b.Run("net="+n.Name, func(b *testing.B) {
							cfg := Config{Net: n, PoolSize: poolSize()}
							if store == "dir" {
								cfg.NonceDir = b.TempDir()
							}
							f, err := Start(context.Background(), cfg)
							if err != nil {
								b.Fatal(err)
							}
							defer f.Close()
							var height atomic.Int64
							height.Store(FirstHeight - 1)
							for _, k := range InFlight {
								b.Run(fmt.Sprintf("inflight=%d", k), func(b *testing.B) { Sign(b, f, k, &height) })
							}
						})
					}
				})
			}
		})
		for _, n := range Networks() {
			b.Run("echo/net="+n.Name, func(b *testing.B) { Echo(b, n) })
		}
		b.Run("presign", func(b *testing.B) {
			b.Run("commit", Commit)
			for _, batch := range []int{64, 1024} {
				b.Run(fmt.Sprintf("store=mem/batch=%d", batch), func(b *testing.B) {
					Generate(b, func() guard.FS { return &guard.MemFS{} }, batch)
				})
				b.Run(fmt.Sprintf("store=dir/batch=%d", batch), func(b *testing.B) {
					Generate(b, func() guard.FS { return guard.DirFS(b.TempDir()) }, batch)
				})
			}
			n, _ := NetworkNamed("same-zone")
			b.Run("net="+n.Name+"/batch=1024", func(b *testing.B) { PresignNet(b, n, 1024) })
		})
		b.Run("compute/party-share", PartyShare)
		b.Run("compute/coordinator-commitment", CoordinatorCommitment)
		b.Run("compute/coordinator-aggregate", CoordinatorAggregate)
		b.Run("dkg/inprocess", DKGInProcess)
		for _, n := range Networks() {
			b.Run("dkg/net="+n.Name, func(b *testing.B) { DKGNet(b, n) })
		}
	})
}
