package frost

import (
	"crypto/rand"
	"testing"

	"github.com/signerkit/signerkit/guard"
)

func benchKeys(b *testing.B) *Dealt {
	d, err := Split(scalarFromUint(99), 2, 3, rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// BenchmarkCommit is one nonce pair and its commitments (round one).
func BenchmarkCommit(b *testing.B) {
	d := benchKeys(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Commit(d.Shares[0], rand.Reader); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commitments/s")
}

// BenchmarkNonceStoreGenerate is presigning into a store in batches of
// 256 (MemFS: no sync cost), per commitment.
func BenchmarkNonceStoreGenerate(b *testing.B) {
	d := benchKeys(b)
	s, err := OpenNonceStore(d.Shares[0], NonceStoreConfig{FS: &guard.MemFS{}, Capacity: 1 << 16})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		ps, err := s.Generate(256)
		if err != nil || len(ps) == 0 {
			// Full: empty it by reopening a new store.
			s.Close()
			s, _ = OpenNonceStore(d.Shares[0], NonceStoreConfig{FS: &guard.MemFS{}, Capacity: 1 << 16})
			continue
		}
		n += len(ps)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "commitments/s")
}

// BenchmarkSignShare is one participant's round two for a 2-of-3 sign.
func BenchmarkSignShare(b *testing.B) {
	d := benchKeys(b)
	msg := make([]byte, 128)
	other, _ := Commit(d.Shares[1], rand.Reader)
	b.ReportAllocs()
	for b.Loop() {
		n, _ := Commit(d.Shares[0], rand.Reader)
		list := []SigningCommitments{n.Commitments(), other.Commitments()}
		if _, err := Sign(d.Shares[0], n, msg, list); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAggregate is the coordinator's aggregation with its signature
// check, for 2 shares.
func BenchmarkAggregate(b *testing.B) {
	d := benchKeys(b)
	msg := make([]byte, 128)
	n1, _ := Commit(d.Shares[0], rand.Reader)
	n2, _ := Commit(d.Shares[1], rand.Reader)
	list := []SigningCommitments{n1.Commitments(), n2.Commitments()}
	s1, _ := Sign(d.Shares[0], n1, msg, list)
	s2, _ := Sign(d.Shares[1], n2, msg, list)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Aggregate(d.Public, msg, list, []SignatureShare{s1, s2}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDKG is a whole 2-of-3 key generation in process.
func BenchmarkDKG(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := RunDKG(2, 3, rand.Reader); err != nil {
			b.Fatal(err)
		}
	}
}
