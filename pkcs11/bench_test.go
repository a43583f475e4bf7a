//go:build cgo

package pkcs11_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/signerkit/signerkit/pkcs11"
	"github.com/signerkit/signerkit/pkcs11/pkcs11test"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

// BenchmarkSignParallel signs with one P-256 key on SoftHSM2 from
// GOMAXPROCS goroutines (b.RunParallel) through a pool of 1 or 4 sessions.
// Run it with -cpu 1,2 to compare one goroutine with two: with pool=1 the
// signs take turns on the one session; with pool=4 each goroutine has a
// session of its own and the throughput scales with the cores.
func BenchmarkSignParallel(b *testing.B) {
	b.Run("backend=pkcs11-softhsm-p256", func(b *testing.B) {
		for _, size := range []int{1, 4} {
			b.Run(fmt.Sprintf("pool=%d", size), func(b *testing.B) {
				st := pkcs11test.New(b)
				cfg := st.Config()
				cfg.PoolSize = size
				tok, err := pkcs11.Open(context.Background(), cfg)
				if err != nil {
					b.Fatal(err)
				}
				defer tok.Close()
				ki, err := tok.GenerateKey(context.Background(), signer.ECDSAP256, "parallel")
				if err != nil {
					b.Fatal(err)
				}
				k, err := tok.Key(context.Background(), ki.Ref())
				if err != nil {
					b.Fatal(err)
				}
				defer k.Close()
				msg := []byte("a 32-byte message for P-256 ...")
				b.ReportAllocs()
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					var sig []byte
					var err error
					for pb.Next() {
						if sig, err = k.SignContext(context.Background(), msg); err != nil {
							b.Error(err)
							return
						}
					}
					if err := signertest.VerifyStd(signer.ECDSAP256, k.Public(), msg, sig); sig != nil && err != nil {
						b.Error(err)
					}
				})
			})
		}
	})
}

// BenchmarkSignScaling measures how P-256 throughput on SoftHSM2 grows
// from one goroutine to two, with pools of 1 and 4 sessions. Each
// iteration alternates a burst of 16 signs from one goroutine with a burst
// of 16 signs from each of two goroutines, so that both see the same load
// on a shared machine; it reports throughput-2v1, the signs per second of
// two goroutines over those of one (2 would be perfect scaling).
func BenchmarkSignScaling(b *testing.B) {
	const burst = 16
	b.Run("backend=pkcs11-softhsm-p256", func(b *testing.B) {
		for _, size := range []int{1, 4} {
			b.Run(fmt.Sprintf("pool=%d", size), func(b *testing.B) {
				st := pkcs11test.New(b)
				cfg := st.Config()
				cfg.PoolSize = size
				tok, err := pkcs11.Open(context.Background(), cfg)
				if err != nil {
					b.Fatal(err)
				}
				defer tok.Close()
				ki, err := tok.GenerateKey(context.Background(), signer.ECDSAP256, "scaling")
				if err != nil {
					b.Fatal(err)
				}
				k, err := tok.Key(context.Background(), ki.Ref())
				if err != nil {
					b.Fatal(err)
				}
				defer k.Close()
				msg := []byte("a 32-byte message for P-256 ...")
				signs := func(n int) {
					for range n {
						sig, err := k.SignContext(context.Background(), msg)
						if err != nil {
							b.Error(err)
							return
						}
						if len(sig) != 64 {
							b.Errorf("signature of %d bytes", len(sig))
						}
					}
				}
				var one, two time.Duration
				i := 0
				for b.Loop() {
					for j := range 2 {
						start := time.Now()
						if (i+j)%2 == 0 {
							signs(burst)
							one += time.Since(start)
							continue
						}
						var wg sync.WaitGroup
						for range 2 {
							wg.Add(1)
							go func() { defer wg.Done(); signs(burst) }()
						}
						wg.Wait()
						two += time.Since(start)
					}
					i++
				}
				// Throughput: burst signs in one's time, 2·burst in two's.
				b.ReportMetric(2*float64(one)/float64(two), "throughput-2v1")
				sig, err := k.SignContext(context.Background(), msg)
				if err != nil {
					b.Fatal(err)
				}
				if err := signertest.VerifyStd(signer.ECDSAP256, k.Public(), msg, sig); err != nil {
					b.Fatal(err)
				}
			})
		}
	})
}
