package thresholdbench

import (
	"context"
	"crypto/rand"
	"testing"
	"time"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/threshold/frost"
)

// testKey returns participant 1's share of a new 2-of-3 key.
func testKey(b *testing.B) *frost.KeyPackage {
	b.Helper()
	seed := make([]byte, 32)
	rand.Read(seed)
	d, err := frost.SplitSeed(seed, 2, 3, rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	return d.Shares[0]
}

// reportRate reports ops things made in elapsed with cpu of CPU time as
// <unit>/s and <unit>/s/core.
func reportRate(b *testing.B, ops int, elapsed, cpu time.Duration, cpuOK bool, unit string) {
	if ops == 0 {
		return
	}
	if elapsed > 0 {
		b.ReportMetric(float64(ops)/elapsed.Seconds(), unit+"/s")
	}
	if cpuOK && cpu > 0 {
		b.ReportMetric(float64(ops)/cpu.Seconds(), unit+"/s/core")
	}
}

// Commit is the presign row of the protocol alone: frost.Commit, one nonce
// pair and its commitments per op, on one goroutine. commitments/s/core
// divides by the process's CPU time, so the garbage collector's share
// counts.
func Commit(b *testing.B) {
	k := testKey(b)
	b.ReportAllocs()
	cpu0, ok := cpuTime()
	for b.Loop() {
		n, err := frost.Commit(k, rand.Reader)
		if err != nil {
			b.Fatal(err)
		}
		n.Wipe()
	}
	cpu1, _ := cpuTime()
	reportRate(b, b.N, b.Elapsed(), cpu1-cpu0, ok, "commitments")
}

// Generate is the presign row of a party's nonce store: NonceStore.Generate
// of batch nonce pairs per op, written to the store's file (and, for a
// guard.DirFS, fdatasync'd once per batch) before their commitments are
// returned. newFS returns the FS of a fresh store; a full store is
// replaced by a fresh one with the clock stopped.
func Generate(b *testing.B, newFS func() guard.FS, batch int) {
	k := testKey(b)
	const capacity = 1 << 16
	open := func() *frost.NonceStore {
		st, err := frost.OpenNonceStore(k, frost.NonceStoreConfig{FS: newFS(), Capacity: capacity})
		if err != nil {
			b.Fatal(err)
		}
		return st
	}
	st := open()
	defer func() { st.Close() }()
	b.ReportAllocs()
	var cpu time.Duration
	cpuOK := true
	made := 0
	for b.Loop() {
		if st.Available()+batch > capacity {
			b.StopTimer()
			st.Close()
			st = open()
			b.StartTimer()
		}
		c0, ok := cpuTime()
		ps, err := st.Generate(batch)
		c1, _ := cpuTime()
		cpu += c1 - c0
		cpuOK = cpuOK && ok
		if err != nil {
			b.Fatal(err)
		}
		if len(ps) != batch {
			b.Fatalf("Generate(%d) made %d", batch, len(ps))
		}
		made += len(ps)
	}
	reportRate(b, made, b.Elapsed(), cpu, cpuOK, "commitments")
}

// PresignNet is the presign row over the network: a coordinator asks the
// parties in turn for batch nonce commitments per op on a fixture placed
// on n (each party's nonces in memory), each request one round trip. It
// reports commitments/s and /core (the CPU time of the coordinator and
// all parties together, TLS included) and the bytes per commitment:
// payload-B/commitment (frame bodies) and tls-B/commitment (under TLS).
func PresignNet(b *testing.B, n Network, batch int) {
	ctx := context.Background()
	// Each party keeps every commitment handed out until it signs with
	// it, so the stores must hold all of this run's.
	f, err := Start(ctx, Config{Net: n, PoolSize: 64, NonceCapacity: (b.N/3+1)*batch + 1024})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	ids := f.Cluster.Config.Public.IDs()
	for _, id := range ids { // a presign connection to each party, and its handshake, before the clock
		if _, err := f.Signer.Presign(ctx, id, 1); err != nil {
			b.Fatal(err)
		}
	}
	before := f.PresignTraffic()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, ok := cpuTime()
	made := 0
	for i := range b.N {
		got, err := f.Signer.Presign(ctx, ids[i%len(ids)], batch)
		if err != nil {
			b.Fatal(err)
		}
		if got != batch {
			b.Fatalf("presign of %d made %d", batch, got)
		}
		made += got
	}
	cpu1, _ := cpuTime()
	b.StopTimer()
	t := f.PresignTraffic().Sub(before)
	reportRate(b, made, b.Elapsed(), cpu1-cpu0, ok, "commitments")
	b.ReportMetric(float64(t.Payload)/float64(made), "payload-B/commitment")
	b.ReportMetric(float64(t.TLS)/float64(made), "tls-B/commitment")
}
