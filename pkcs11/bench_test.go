//go:build cgo

package pkcs11_test

import (
	"context"
	"fmt"
	"testing"

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
