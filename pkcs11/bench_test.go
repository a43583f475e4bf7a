//go:build cgo

package pkcs11_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/signerkit/signerkit/internal/cgoloop"
	"github.com/signerkit/signerkit/pkcs11"
	"github.com/signerkit/signerkit/pkcs11/pkcs11test"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

// BenchmarkSignParallel signs with one P-256 key on SoftHSM2 from
// GOMAXPROCS goroutines (b.RunParallel) through a pool of 1 or 4 sessions.
// Run it with -cpu 1,2 to compare one goroutine with two: with pool=1 the
// signs take turns on the one session; with pool=4 each goroutine has a
// session of its own and the throughput scales as far as the token and Go
// allow (see the package doc).
//
// Beside it, backend=raw-pkcs11-softhsm-p256 signs through bare
// miekg/pkcs11 sessions, one per goroutine, on the module loaded with the
// same mutexes: what the token allows without this package. Two yardsticks
// run beside both: backend=cgo-loop calls a C loop as long as one P-256
// sign (timed first, from one goroutine) through cgo, and backend=go-loop
// runs the same loop in Go (see internal/cgoloop). The first is how far
// anything that calls C once per sign can scale on the machine at that
// moment; the second, how far Go code can.
func BenchmarkSignParallel(b *testing.B) {
	rounds := loopRounds(b)
	want := cgoloop.RunGo(rounds) // outside the timed loops
	for _, yard := range []struct {
		name string
		run  func(uint64) uint64
	}{{"cgo-loop", cgoloop.Run}, {"go-loop", cgoloop.RunGo}} {
		b.Run("backend="+yard.name, func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if got := yard.run(rounds); got != want {
						b.Errorf("loop ended at %#x, want %#x", got, want)
						return
					}
				}
			})
		})
	}
	b.Run("backend=raw-pkcs11-softhsm-p256", func(b *testing.B) {
		for _, locking := range []pkcs11.Locking{pkcs11.LockingSpin, pkcs11.LockingOS} {
			// The Signer only loads the module with these mutexes; the
			// signs go through bare sessions, one per goroutine.
			p256Row(b, fmt.Sprintf("locking=%v", locking), true, []func(*pkcs11.Config){poolSize(1), lockingMode(locking)}, func(b *testing.B, row *p256Key) {
				msg := []byte("a 32-byte message for P-256 ...")
				digest := sha256.Sum256(msg)
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					r := <-row.raws
					defer func() { row.raws <- r }()
					var sig []byte
					var err error
					for pb.Next() {
						if sig, err = r.Sign(digest[:]); err != nil {
							b.Error(err)
							return
						}
					}
					if err := signertest.VerifyStd(signer.ECDSAP256, row.k.Public(), msg, sig); sig != nil && err != nil {
						b.Error(err)
					}
				})
			})
		}
	})
	b.Run("backend=pkcs11-softhsm-p256", func(b *testing.B) {
		for _, locking := range []pkcs11.Locking{pkcs11.LockingSpin, pkcs11.LockingOS} {
			for _, size := range []int{1, 4} {
				p256Row(b, fmt.Sprintf("locking=%v/pool=%d", locking, size), false, []func(*pkcs11.Config){poolSize(size), lockingMode(locking)}, func(b *testing.B, row *p256Key) {
					k := row.k
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
		}
	})
}

// p256Key is what a row of BenchmarkSignParallel signs with: a Store on a
// throwaway token, a P-256 key labelled "parallel" on it, and for the raw
// rows a bare session on the key per P.
type p256Key struct {
	tok  *pkcs11.Store
	k    *pkcs11.Signer
	raws chan *pkcs11test.Raw
}

// p256Row runs f as the sub-benchmark name of b. The function of a row
// runs once per b.N the benchmark tries, and each run would make a token,
// initialize the module and generate a key, which takes longer than the
// row's timed loop; p256Row makes them on the row's first run, with the
// Config mutate gives, keeps them for its later runs, and closes them
// once the row is done, so that the module is finalized and the next row
// initializes it with its own mutexes.
func p256Row(b *testing.B, name string, raw bool, mutate []func(*pkcs11.Config), f func(b *testing.B, row *p256Key)) {
	st := pkcs11test.New(b) // skips b as the rows' own token would
	row := new(p256Key)
	defer row.close()
	opened := false
	b.Run(name, func(b *testing.B) {
		if !opened {
			opened = true
			cfg := st.Config()
			for _, m := range mutate {
				m(&cfg)
			}
			tok, err := pkcs11.OpenStore(context.Background(), cfg)
			if err != nil {
				b.Fatalf("OpenStore: %v", err)
			}
			row.tok = tok
			ki, err := tok.GenerateKey(context.Background(), signer.ECDSAP256, "parallel")
			if err != nil {
				b.Fatalf("GenerateKey: %v", err)
			}
			if row.k, err = openKey(context.Background(), tok, ki.Ref()); err != nil {
				b.Fatalf("OpenKey: %v", err)
			}
			if raw {
				row.raws = make(chan *pkcs11test.Raw, runtime.GOMAXPROCS(0))
				for range cap(row.raws) {
					r, err := st.OpenRaw("parallel") // shares the module k loaded
					if err != nil {
						b.Fatal(err)
					}
					row.raws <- r
				}
			}
		}
		if row.k == nil {
			b.Fatal("the row's first run failed to open its key")
		}
		f(b, row)
	})
}

// close closes what p256Row opened: the bare sessions, then the key, then
// the Store.
func (r *p256Key) close() {
	if r.raws != nil {
		close(r.raws)
		for raw := range r.raws {
			raw.Close()
		}
	}
	if r.k != nil {
		r.k.Close()
	}
	if r.tok != nil {
		r.tok.Close()
	}
}

// BenchmarkSignScaling measures how P-256 throughput grows from one
// goroutine to two, through a Signer with pools of 1 and 4 sessions, on a
// module initialized with each kind of mutex (Config.Locking). Each
// iteration alternates a burst of signs from one goroutine with a burst
// from each of two goroutines, so both see the same load, and does the
// same through two bare miekg/pkcs11 sessions on the same key and through
// crypto/ecdsa. It reports throughput-2v1, the signs per second of two
// goroutines over those of one (2 is perfect scaling); raw-throughput-2v1,
// the same for the bare sessions, which share the module and its mutexes:
// what the token allows at that moment; and ceiling-throughput-2v1, the
// same for crypto/ecdsa: what the machine allows CPU-bound work at that
// moment (on a shared VM whose other tenants hold a core, nothing scales);
// cgo-ceiling-throughput-2v1, the same for a C loop as long as one sign
// called through cgo (internal/cgoloop): what any backend that calls C
// once per sign can reach; and of-ceiling and of-cgo-ceiling, the Signer's
// ratio over each of these two. It needs two Ps, and skips with one:
// crypto/ecdsa's goroutines would take turns on it, so the ceiling and
// of-ceiling would mean nothing. Run it
// without -cpu or with -cpu 2 alone: it uses b.Loop, so the first value of
// a -cpu list runs at the GOMAXPROCS the previous one left
// (golang/go#49980).
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
	rounds := loopRounds(b)
	loopWant := cgoloop.RunGo(rounds)
	b.Run("backend=pkcs11-softhsm-p256", func(b *testing.B) {
		eachLockingAndPool(b, func(b *testing.B, locking pkcs11.Locking, size int) {
			if runtime.GOMAXPROCS(0) < 2 {
				// Read here, not in the parent: this is where the
				// measurement runs.
				b.Skip("needs GOMAXPROCS >= 2: with one P, crypto/ecdsa cannot scale and the ceilings mean nothing")
			}
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
					last[1][w], err = raws[w].Sign(digest[:])
					return err
				},
				ceiling,
				func(w int) error {
					if got := cgoloop.Run(rounds); got != loopWant {
						return fmt.Errorf("loop ended at %#x, want %#x", got, loopWant)
					}
					return nil
				},
			})
			b.ReportMetric(ratios[0], "throughput-2v1")
			b.ReportMetric(ratios[1], "raw-throughput-2v1")
			b.ReportMetric(ratios[2], "ceiling-throughput-2v1")
			b.ReportMetric(ratios[3], "cgo-ceiling-throughput-2v1")
			// What share of the machine's scaling at that moment
			// the Signer kept (1: all of it), and of what a cgo call
			// as long as a sign allows.
			b.ReportMetric(ratios[0]/ratios[2], "of-ceiling")
			b.ReportMetric(ratios[0]/ratios[3], "of-cgo-ceiling")
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

// loopRounds returns the rounds of internal/cgoloop that take as long as
// one P-256 sign, worked out once per test binary so that the runs at
// each -cpu value time the same loop.
func loopRounds(b *testing.B) uint64 {
	yardstick.Lock()
	defer yardstick.Unlock()
	if yardstick.rounds == 0 {
		yardstick.rounds = cgoloop.Calibrate(p256SignTime(b))
	}
	return yardstick.rounds
}

var yardstick struct {
	sync.Mutex
	rounds uint64
}

// p256SignTime returns how long one P-256 sign takes on SoftHSM2 from one
// goroutine: the fastest of 50, after 10 to warm up.
func p256SignTime(b *testing.B) time.Duration {
	b.Helper()
	// Closed before returning, so that the module is finalized and the
	// next Open initializes it for the sub-benchmark's own token.
	tok, err := pkcs11.OpenStore(context.Background(), pkcs11test.New(b).Config())
	if err != nil {
		b.Fatal(err)
	}
	defer tok.Close()
	ki, err := tok.GenerateKey(context.Background(), signer.ECDSAP256, "yardstick")
	if err != nil {
		b.Fatal(err)
	}
	k, err := openKey(context.Background(), tok, ki.Ref())
	if err != nil {
		b.Fatal(err)
	}
	defer k.Close()
	msg := []byte("a 32-byte message for P-256 ...")
	best := time.Duration(1<<63 - 1)
	var sig []byte
	for i := range 60 {
		start := time.Now()
		if sig, err = k.SignContext(context.Background(), msg); err != nil {
			b.Fatal(err)
		}
		if e := time.Since(start); i >= 10 && e < best {
			best = e
		}
	}
	if err := signertest.VerifyStd(signer.ECDSAP256, k.Public(), msg, sig); err != nil {
		b.Fatal(err)
	}
	return best
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
