package cggmp21

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"flag"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/signerkit/signerkit/netshape"
	"github.com/taurusgroup/multi-party-sig/pkg/ecdsa"
	"github.com/taurusgroup/multi-party-sig/pkg/party"
)

// Row is the prefix of every row, as cmd/signerbench reads it.
const Row = "cggmp21-2of3-secp256k1"

// inFlight are the online rows' loads, as the FROST rows'.
var inFlight = []int{1, 50, 100, 200}

// presignPool is the number of presignatures the online rows take turns
// with (see Signer).
const presignPool = 2

// cpuTime returns the process's user and system CPU time.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkThreshold runs the rows:
//
//	cggmp21-2of3-secp256k1/keygen
//	cggmp21-2of3-secp256k1/presign
//	cggmp21-2of3-secp256k1/sign/net=<profile>/inflight=<1|50|100|200>
//	cggmp21-2of3-secp256k1/compute/<party-share|combine-verify>
//
// The presign and sign rows use the key of KeysFile; keygen makes new
// ones, a minute of CPU each.
func BenchmarkThreshold(b *testing.B) {
	keys := loadKeys(b)
	b.Run(Row, func(b *testing.B) {
		b.Run("keygen", benchKeygen)
		b.Run("presign", func(b *testing.B) { benchPresign(b, keys) })
		var presigs []Presignature
		for _, p := range netshape.Profiles() {
			b.Run("sign/net="+p.Name, func(b *testing.B) {
				m, err := NewMesh(PlacementOn(p))
				if err != nil {
					b.Fatal(err)
				}
				defer m.Close()
				for len(presigs) < presignPool {
					ps, err := m.Presign(context.Background(), keys, 1, 2)
					if err != nil {
						b.Fatal(err)
					}
					presigs = append(presigs, ps)
				}
				s, err := m.NewSigner(keys, 1, 2, presigs)
				if err != nil {
					b.Fatal(err)
				}
				var height atomic.Uint64
				for _, k := range inFlight {
					b.Run(fmt.Sprintf("inflight=%d", k), func(b *testing.B) { benchSign(b, m, s, k, &height) })
				}
			})
		}
		b.Run("compute/party-share", func(b *testing.B) { benchShare(b, keys, &presigs) })
		b.Run("compute/combine-verify", func(b *testing.B) { benchCombine(b, keys, &presigs) })
	})
}

// onePresignature returns the first of *presigs, made if there is none.
func onePresignature(b *testing.B, keys Keys, presigs *[]Presignature) Presignature {
	if len(*presigs) == 0 {
		m := newMesh(b)
		ps, err := m.Presign(context.Background(), keys, 1, 2)
		if err != nil {
			b.Fatal(err)
		}
		*presigs = append(*presigs, ps)
	}
	return (*presigs)[0]
}

// reportCPU reports the CPU time since cpu0 per op as cpu-µs/op.
func reportCPU(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64((cpuTime(b)-cpu0).Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
}

// benchShare is a signer's online step alone, on one goroutine: its share
// σ = k·m + r·χ of a hash.
func benchShare(b *testing.B, keys Keys, presigs *[]Presignature) {
	p := onePresignature(b, keys, presigs)
	hash := sha256.Sum256([]byte("share"))
	cpu0 := cpuTime(b)
	for b.Loop() {
		p[0].SignatureShare(hash[:])
	}
	reportCPU(b, cpu0)
}

// benchCombine is the last step, on one goroutine: summing the two shares
// and the library's own verification of the result (which PresignOnline
// makes before it returns a signature).
func benchCombine(b *testing.B, keys Keys, presigs *[]Presignature) {
	p := onePresignature(b, keys, presigs)
	hash := sha256.Sum256([]byte("combine"))
	shares := map[party.ID]ecdsa.SignatureShare{IDs[0]: p[0].SignatureShare(hash[:]), IDs[1]: p[1].SignatureShare(hash[:])}
	pub := keys[0].PublicPoint()
	cpu0 := cpuTime(b)
	for b.Loop() {
		if !p[0].Signature(shares).Verify(pub, hash[:]) {
			b.Fatal("the combined signature does not verify")
		}
	}
	reportCPU(b, cpu0)
}

// reportTraffic reports t per op of ops, divided among parties, as
// payload-, tls- and wire-B/<per>.
func reportTraffic(b *testing.B, t Traffic, ops, parties int, per string) {
	d := float64(ops * parties)
	b.ReportMetric(float64(t.Payload)/d, "payload-B/"+per)
	b.ReportMetric(float64(t.TLS)/d, "tls-B/"+per)
	b.ReportMetric(float64(t.Wire)/d, "wire-B/"+per)
}

// benchKeygen is a key generation among the three parties on the
// same-zone profile: cpu-ms/op is all three parties' CPU, the bytes are
// the key generation's (not the connections' handshakes).
func benchKeygen(b *testing.B) {
	m, err := NewMesh(PlacementOn(netshape.SameZone()))
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	t0, cpu0 := m.Traffic(), cpuTime(b)
	for b.Loop() {
		if _, err := m.Keygen(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime(b)-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
	reportTraffic(b, m.Traffic().Sub(t0), b.N, 1, "op")
}

// benchPresign makes presignatures of signers 1 and 2 on the same-zone
// profile, a batch of max(2, GOMAXPROCS) at once an iteration, so that
// even one iteration (a presignature takes seconds) sees a sustained
// load: presigs/s is the rate, core-s/presig the process's CPU per
// presignature (both parties', TLS and the shaper's), and the bytes are
// per party per presignature. ns/op is a batch's.
func benchPresign(b *testing.B, keys Keys) {
	m, err := NewMesh(PlacementOn(netshape.SameZone()))
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	batch := max(2, runtime.GOMAXPROCS(0))
	t0, cpu0 := m.Traffic(), cpuTime(b)
	for b.Loop() {
		var wg sync.WaitGroup
		for range batch {
			wg.Go(func() {
				if _, err := m.Presign(context.Background(), keys, 1, 2); err != nil {
					b.Error(err)
				}
			})
		}
		wg.Wait()
	}
	n := b.N * batch
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "presigs/s")
	b.ReportMetric((cpuTime(b)-cpu0).Seconds()/float64(n), "core-s/presig")
	reportTraffic(b, m.Traffic().Sub(t0), n, 2, "party")
}

// signed is one online sign's outcome.
type signed struct {
	hash [32]byte
	sig  []byte
	took time.Duration
	err  error
}

// signOne signs the hash of the next height's message.
func signOne(s *Signer, height *atomic.Uint64) signed {
	hash := sha256.Sum256(binary.BigEndian.AppendUint64([]byte("cggmp21 bench prevote "), height.Add(1)))
	ctx, cancel := context.WithTimeout(context.Background(), SignTimeout)
	defer cancel()
	t0 := time.Now()
	sig, err := s.Sign(ctx, hash)
	r := signed{hash: hash, took: time.Since(t0), err: err}
	if err == nil {
		r.sig, r.err = Signature(sig)
	}
	return r
}

// benchSign keeps inflight signs in flight on s; b.Loop counts them as
// they finish, after the first inflight have, so signs/s is the sustained
// rate and p50-ms, p99-ms the latencies of the signs counted. The signs
// still in flight when it ends finish, and their CPU and bytes count in
// the figures per sign. Every signature is verified with decred's
// secp256k1 and the textbook check after the clock stops.
func benchSign(b *testing.B, m *Mesh, s *Signer, inflight int, height *atomic.Uint64) {
	if bt := flag.Lookup("test.benchtime"); bt != nil {
		if n, err := strconv.Atoi(strings.TrimSuffix(bt.Value.String(), "x")); err == nil && n > 0 {
			inflight = min(inflight, n)
		}
	}
	out := make(chan signed)
	stop := make(chan struct{})
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		all []signed
	)
	t0, cpu0 := m.Traffic(), cpuTime(b)
	for range inflight {
		wg.Go(func() {
			for {
				r := signOne(s, height)
				select {
				case out <- r:
				case <-stop:
					mu.Lock()
					all = append(all, r)
					mu.Unlock()
					return
				}
			}
		})
	}
	for range inflight {
		all = append(all, <-out)
	}
	var timed []time.Duration
	for b.Loop() {
		r := <-out
		all = append(all, r)
		timed = append(timed, r.took)
	}
	elapsed := b.Elapsed()
	close(stop)
	wg.Wait()
	cpu, traffic := cpuTime(b)-cpu0, m.Traffic().Sub(t0)
	for _, r := range all {
		if r.err != nil {
			b.Fatal(r.err)
		}
		checkSignature(b, s, r.hash, r.sig)
	}
	slices.Sort(timed)
	pct := func(p float64) float64 {
		i := min(max(int(p*float64(len(timed))+0.999999)-1, 0), len(timed)-1)
		return float64(timed[i].Microseconds()) / 1e3
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(m.RTT(1, 2), "rtt-ms")
	b.ReportMetric(float64(len(timed))/elapsed.Seconds(), "signs/s")
	b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(len(all)), "cpu-ms/op")
	reportTraffic(b, traffic, len(all), 2, "party")
}
