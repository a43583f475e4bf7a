package frost

import (
	"crypto/rand"
	"testing"
	"time"

	"github.com/signerkit/signerkit/internal/statefile"
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
	s, err := OpenNonceStore(d.Shares[0], NonceStoreConfig{FS: &statefile.MemFS{}, Capacity: 1 << 16})
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
			s, _ = OpenNonceStore(d.Shares[0], NonceStoreConfig{FS: &statefile.MemFS{}, Capacity: 1 << 16})
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

// BenchmarkParseSigningCommitments is the check of one received commitment
// pair: two element decodings, each with the prime-order subgroup check.
func BenchmarkParseSigningCommitments(b *testing.B) {
	d := benchKeys(b)
	n, _ := Commit(d.Shares[0], rand.Reader)
	enc, err := n.Commitments().AppendBinary(nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseSigningCommitments(enc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNonceStoreGenerateFile is BenchmarkNonceStoreGenerate on a real
// file (DirFS), sync included.
func BenchmarkNonceStoreGenerateFile(b *testing.B) {
	d := benchKeys(b)
	open := func() *NonceStore {
		s, err := OpenNonceStore(d.Shares[0], NonceStoreConfig{FS: statefile.Dir(b.TempDir()), Capacity: 1 << 14})
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	s := open()
	defer func() { s.Close() }()
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		ps, err := s.Generate(256)
		if err != nil || len(ps) == 0 {
			s.Close()
			s = open()
			continue
		}
		n += len(ps)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "commitments/s")
}

// BenchmarkEncodeCommitments is the encoding of 256 presigned commitment
// pairs: one at a time (a field inversion per element) and as a batch.
func BenchmarkEncodeCommitments(b *testing.B) {
	d := benchKeys(b)
	cs := make([]SigningCommitments, 256)
	for i := range cs {
		n, _ := Commit(d.Shares[0], rand.Reader)
		cs[i] = n.Commitments()
	}
	b.Run("each", func(b *testing.B) {
		for b.Loop() {
			out := make([]byte, 0, len(cs)*SigningCommitmentsSize)
			for _, c := range cs {
				out, _ = c.AppendBinary(out)
			}
		}
	})
	b.Run("batch", func(b *testing.B) {
		for b.Loop() {
			if _, err := AppendCommitmentElements(nil, cs...); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkAggregatePrepared is what remains of BenchmarkAggregate once
// the shares arrive, when the coordinator prepared the aggregation while
// they travelled: the sum and the crypto/ed25519 check.
func BenchmarkAggregatePrepared(b *testing.B) {
	d := benchKeys(b)
	msg := make([]byte, 128)
	n1, _ := Commit(d.Shares[0], rand.Reader)
	n2, _ := Commit(d.Shares[1], rand.Reader)
	list := []SigningCommitments{n1.Commitments(), n2.Commitments()}
	s1, _ := Sign(d.Shares[0], n1, msg, list)
	s2, _ := Sign(d.Shares[1], n2, msg, list)
	a, err := PrepareAggregate(d.Public, msg, list)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Aggregate([]SignatureShare{s1, s2}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNonceStoreSignGated is a party's share with its nonce store in
// a file and a gate that writes and syncs another file, as a party's guard
// records the message: "sequential" runs the gate first and then the
// store (the order before SignAmongGated), "gated" runs them at once. Signs
// are 2 ms apart (not timed), as a validator's votes are at least: back to
// back, a sync that follows another costs a tenth of one after a pause.
func BenchmarkNonceStoreSignGated(b *testing.B) {
	d := benchKeys(b)
	for _, gated := range []bool{false, true} {
		b.Run(map[bool]string{false: "sequential", true: "gated"}[gated], func(b *testing.B) {
			dir := b.TempDir()
			s, err := OpenNonceStore(d.Shares[0], NonceStoreConfig{FS: statefile.Dir(dir), Capacity: 1 << 12})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			if err := statefile.Dir(dir).Create("guard", make([]byte, 4096)); err != nil {
				b.Fatal(err)
			}
			g, err := statefile.Dir(dir).Open("guard")
			if err != nil {
				b.Fatal(err)
			}
			defer g.Close()
			gate := func() error {
				if _, err := g.WriteAt(make([]byte, 512), 0); err != nil {
					return err
				}
				return g.Sync()
			}
			other, _ := Commit(d.Shares[1], rand.Reader)
			others := []SigningCommitments{other.Commitments()}
			msg := make([]byte, 128)
			for b.Loop() {
				b.StopTimer()
				ps, err := s.Generate(1)
				if err != nil || len(ps) != 1 {
					b.Fatal(err)
				}
				time.Sleep(2 * time.Millisecond)
				b.StartTimer()
				if gated {
					_, err = s.SignAmongGated(ps[0].Handle, msg, others, gate)
				} else if err = gate(); err == nil {
					_, err = s.SignAmong(ps[0].Handle, msg, others)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
