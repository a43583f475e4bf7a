//go:build cgo

package pkcs11_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"sync"
	"testing"
	"time"

	p11 "github.com/miekg/pkcs11"

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
		eachLockingAndPool(b, func(b *testing.B, locking pkcs11.Locking, size int) {
			_, tok := openToken(b, poolSize(size), lockingMode(locking))
			k := generateKey(b, tok, signer.ECDSAP256, "parallel")
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
	})
}

// BenchmarkSignScaling measures how P-256 throughput grows from one
// goroutine to two, through a Key with pools of 1 and 4 sessions, on a
// module initialized with each kind of mutex (Config.Locking). Each
// iteration alternates a burst of signs from one goroutine with a burst
// from each of two goroutines, so both see the same load, and does the
// same through two bare miekg/pkcs11 sessions on the same key and through
// crypto/ecdsa. It reports throughput-2v1, the signs per second of two
// goroutines over those of one (2 is perfect scaling); raw-throughput-2v1,
// the same for the bare sessions, which share the module and its mutexes:
// what the token allows at that moment; and ceiling-throughput-2v1, the
// same for crypto/ecdsa: what the machine allows CPU-bound work at that
// moment (on a shared VM whose other tenants hold a core, nothing scales),
// and of-ceiling, the first over the last.
func BenchmarkSignScaling(b *testing.B) {
	msg := []byte("a 32-byte message for P-256 ...")
	digest := sha256.Sum256(msg)
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	var ceilingSigs [2][]byte
	ceiling := func(w int) (err error) {
		// Four signs weigh about what one SoftHSM2 sign does, so the
		// bursts last as long.
		for range 4 {
			if ceilingSigs[w], err = ecdsa.SignASN1(rand.Reader, priv, digest[:]); err != nil {
				return err
			}
		}
		return nil
	}
	defer func() {
		for _, sig := range ceilingSigs {
			if sig != nil && !ecdsa.VerifyASN1(&priv.PublicKey, digest[:], sig) {
				b.Error("crypto/ecdsa's own signature does not verify")
			}
		}
	}()
	b.Run("backend=pkcs11-softhsm-p256", func(b *testing.B) {
		eachLockingAndPool(b, func(b *testing.B, locking pkcs11.Locking, size int) {
			st, tok := openToken(b, poolSize(size), lockingMode(locking))
			k := generateKey(b, tok, signer.ECDSAP256, "scaling")
			var raws [2]*pkcs11test.Raw
			for i := range raws {
				r, err := st.OpenRaw("scaling") // shares the module k loaded
				if err != nil {
					b.Fatal(err)
				}
				defer r.Close()
				raws[i] = r
			}
			var last [2][2][]byte
			ratios := scaling(b, []func(int) error{
				func(w int) (err error) {
					last[0][w], err = k.SignContext(context.Background(), msg)
					return err
				},
				func(w int) (err error) {
					last[1][w], err = raws[w].Sign(p11.CKM_ECDSA, digest[:])
					return err
				},
				ceiling,
			})
			b.ReportMetric(ratios[0], "throughput-2v1")
			b.ReportMetric(ratios[1], "raw-throughput-2v1")
			b.ReportMetric(ratios[2], "ceiling-throughput-2v1")
			// What share of the machine's scaling at that moment
			// the Key kept (1: all of it).
			b.ReportMetric(ratios[0]/ratios[2], "of-ceiling")
			for _, sigs := range last { // outside the timed loop
				for _, sig := range sigs {
					if err := signertest.VerifyStd(signer.ECDSAP256, k.Public(), msg, sig); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	})
}

// poolSize sets Config.PoolSize.
func poolSize(n int) func(*pkcs11.Config) {
	return func(c *pkcs11.Config) { c.PoolSize = n }
}

// eachLockingAndPool runs f as a sub-benchmark per module Locking and
// pool size (1 and 4).
func eachLockingAndPool(b *testing.B, f func(b *testing.B, locking pkcs11.Locking, size int)) {
	for _, locking := range []pkcs11.Locking{pkcs11.LockingSpin, pkcs11.LockingOS} {
		for _, size := range []int{1, 4} {
			b.Run(fmt.Sprintf("locking=%v/pool=%d", locking, size), func(b *testing.B) { f(b, locking, size) })
		}
	}
}

// lockingMode sets Config.Locking.
func lockingMode(l pkcs11.Locking) func(*pkcs11.Config) {
	return func(c *pkcs11.Config) { c.Locking = l }
}

// scaling runs the alternating bursts of BenchmarkSignScaling for each
// signer (called by worker 0 alone, or by workers 0 and 1 at once) and
// returns each one's throughput with two workers over that with one.
func scaling(b *testing.B, signers []func(worker int) error) []float64 {
	const burst = 16
	signs := func(sign func(int) error, worker int) {
		for range burst {
			if err := sign(worker); err != nil {
				b.Error(err)
				return
			}
		}
	}
	one := make([]time.Duration, len(signers))
	two := make([]time.Duration, len(signers))
	i := 0
	for b.Loop() {
		for n, sign := range signers {
			for j := range 2 {
				start := time.Now()
				if (i+j)%2 == 0 {
					signs(sign, 0)
					one[n] += time.Since(start)
					continue
				}
				var wg sync.WaitGroup
				for w := range 2 {
					wg.Add(1)
					go func() { defer wg.Done(); signs(sign, w) }()
				}
				wg.Wait()
				two[n] += time.Since(start)
			}
		}
		i++
	}
	// burst signs in one's time against 2·burst in two's.
	ratios := make([]float64, len(signers))
	for k := range ratios {
		ratios[k] = 2 * float64(one[k]) / float64(two[k])
	}
	return ratios
}
