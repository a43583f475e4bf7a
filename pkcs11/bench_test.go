//go:build cgo

package pkcs11_test

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"syscall"
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

// BenchmarkOverhead compares a sign through this package with a bare
// miekg/pkcs11 C_SignInit + C_Sign on the same kind of key (Ed25519, 256
// bytes), reporting the process's CPU time per sign (cpu-ns/op) next to
// ns/op: on a busy machine the wall time swings with the scheduler, the
// CPU time much less.
func BenchmarkOverhead(b *testing.B) {
	msg := make([]byte, 256)
	for _, backend := range []string{"pkcs11-softhsm-ed25519", "raw-pkcs11-softhsm-ed25519"} {
		b.Run("backend="+backend, func(b *testing.B) {
			st := pkcs11test.New(b)
			var sign func() ([]byte, error)
			var pub crypto.PublicKey
			_, priv, _ := ed25519.GenerateKey(rand.Reader)
			if err := st.ImportPKCS8(priv, "overhead", []byte{1}); err != nil {
				b.Fatal(err)
			}
			pub = priv.Public()
			if backend == "raw-pkcs11-softhsm-ed25519" {
				raw, err := st.OpenRaw("overhead")
				if err != nil {
					b.Fatal(err)
				}
				defer raw.Close()
				sign = func() ([]byte, error) { return raw.Sign(pkcs11.CKM_EDDSA, msg) }
			} else {
				cfg := st.Config()
				cfg.KeyLabel = "overhead"
				k, err := pkcs11.OpenKey(context.Background(), cfg)
				if err != nil {
					b.Fatal(err)
				}
				defer k.Close()
				sign = func() ([]byte, error) { return k.SignContext(context.Background(), msg) }
			}
			if _, err := sign(); err != nil {
				b.Fatal(err)
			}
			var sig []byte
			var err error
			b.ReportAllocs()
			cpu0 := cpuTime()
			b.ResetTimer()
			for b.Loop() {
				if sig, err = sign(); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
			if err := signertest.VerifyStd(signer.Ed25519, pub, msg, sig); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// cpuTime returns the user and system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
