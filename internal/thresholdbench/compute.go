package thresholdbench

import (
	"crypto/ed25519"
	"crypto/rand"
	"testing"
	"time"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/threshold/frost"
)

// The compute rows split one signature's CPU between the machines of a
// deployment, without network or TLS: what a party spends on its share
// and what the coordinator spends on each commitment it takes in and on
// aggregating. A sign with two remote parties costs each party one
// commitment (a presign row's per-commitment time) and one share, and the
// coordinator two commitments taken in and one aggregation.

// cpuMeter adds up the process's CPU time over the parts of a loop it is
// started and stopped around. On a shared machine it is steadier than the
// wall clock, which counts the time other processes held the cores.
type cpuMeter struct {
	total, t0 time.Duration
	ok        bool
}

func (m *cpuMeter) start() { m.t0, m.ok = cpuTime() }

func (m *cpuMeter) stop() {
	t, ok := cpuTime()
	m.total += t - m.t0
	m.ok = m.ok && ok
}

// report reports the CPU time per op as cpu-µs/op.
func (m *cpuMeter) report(b *testing.B) {
	if m.ok && b.N > 0 {
		b.ReportMetric(float64(m.total)/1e3/float64(b.N), "cpu-µs/op")
	}
}

// twoSigners returns participants 1 and 2 of a new 2-of-3 key and its
// public key package.
func twoSigners(b *testing.B) ([]*frost.KeyPackage, *frost.PublicKeyPackage) {
	b.Helper()
	seed := make([]byte, 32)
	rand.Read(seed)
	d, err := frost.SplitSeed(seed, 2, 3, rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	return d.Shares[:2], d.Public
}

// PartyShare is a party's work per signature: decoding the other signer's
// commitments (with the subgroup check) and NonceStore.Sign, which marks
// the nonce pair consumed (in memory here) and computes the share. Nonce
// pairs are made 1024 at a time with the clock stopped.
func PartyShare(b *testing.B) {
	keys, _ := twoSigners(b)
	st, err := frost.OpenNonceStore(keys[0], frost.NonceStoreConfig{FS: &guard.MemFS{}, Capacity: 2048})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	other, err := frost.Commit(keys[1], rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	enc, err := other.Commitments().AppendBinary(nil)
	if err != nil {
		b.Fatal(err)
	}
	msg := Message(FirstHeight)
	var ready []frost.Presigned
	var cpu cpuMeter
	b.ReportAllocs()
	for b.Loop() {
		if len(ready) == 0 {
			b.StopTimer()
			if ready, err = st.Generate(1024); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		cpu.start()
		mine := ready[len(ready)-1]
		ready = ready[:len(ready)-1]
		oc, err := frost.ParseSigningCommitments(enc)
		if err != nil {
			b.Fatal(err)
		}
		list := []frost.SigningCommitments{mine.Commitments, oc}
		frost.SortCommitments(list)
		if _, err := st.Sign(mine.Handle, msg, list); err != nil {
			b.Fatal(err)
		}
		cpu.stop()
	}
	cpu.report(b)
}

// CoordinatorCommitment is the coordinator's work per commitment it takes
// into its pool: decoding it, with the checks that its points are
// canonical and in the prime-order subgroup.
func CoordinatorCommitment(b *testing.B) {
	keys, _ := twoSigners(b)
	n, err := frost.Commit(keys[0], rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	enc, err := n.Commitments().AppendBinary(nil)
	if err != nil {
		b.Fatal(err)
	}
	var cpu cpuMeter
	b.ReportAllocs()
	cpu.start()
	for b.Loop() {
		if _, err := frost.ParseSigningCommitments(enc); err != nil {
			b.Fatal(err)
		}
	}
	cpu.stop()
	cpu.report(b)
}

// CoordinatorAggregate is the coordinator's work per signature once the
// shares are in: decoding two shares and frost.Aggregate, which computes
// the group commitment and verifies the signature with crypto/ed25519.
func CoordinatorAggregate(b *testing.B) {
	keys, pub := twoSigners(b)
	msg := Message(FirstHeight)
	var nonces []*frost.SigningNonces
	var list []frost.SigningCommitments
	for _, k := range keys {
		n, err := frost.Commit(k, rand.Reader)
		if err != nil {
			b.Fatal(err)
		}
		nonces = append(nonces, n)
		list = append(list, n.Commitments())
	}
	frost.SortCommitments(list)
	var encs [][]byte
	for i, k := range keys {
		sh, err := frost.Sign(k, nonces[i], msg, list)
		if err != nil {
			b.Fatal(err)
		}
		e, err := sh.AppendBinary(nil)
		if err != nil {
			b.Fatal(err)
		}
		encs = append(encs, e)
	}
	var sig []byte
	var cpu cpuMeter
	b.ReportAllocs()
	cpu.start()
	for b.Loop() {
		shares := make([]frost.SignatureShare, len(encs))
		for i, e := range encs {
			sh, err := frost.ParseSignatureShare(e)
			if err != nil {
				b.Fatal(err)
			}
			shares[i] = sh
		}
		s, err := frost.Aggregate(pub, msg, list, shares)
		if err != nil {
			b.Fatal(err)
		}
		sig = s
	}
	cpu.stop()
	cpu.report(b)
	if !ed25519.Verify(pub.GroupPublicKey(), msg, sig) {
		b.Fatal("the aggregate signature does not verify with crypto/ed25519")
	}
}
