package dklsbench

import (
	"context"
	"testing"

	"github.com/signerkit/signerkit/internal/refsecp256k1"
	"github.com/signerkit/signerkit/threshold/dkls23/dkls23test"

	"github.com/signerkit/signerkit/internal/thresholdbench"
)

// TestFixture: the fixture signs over TLS on a shaped network, every
// signature verifies under the math/big verifier, a presignature is not
// used twice (a sign beyond the pool fails), and traffic is counted.
func TestFixture(t *testing.T) {
	n, _ := thresholdbench.NetworkNamed("same-zone")
	f, err := NewFixture(n)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Fill(9); err != nil {
		t.Fatal(err)
	}
	untimed, timed, _ := f.sustain(2, 5, func() {}, func() {})
	if len(timed) != 5 || len(untimed) < 2 || len(untimed)+len(timed) > 9 {
		t.Fatalf("%d untimed and %d timed signs", len(untimed), len(timed))
	}
	for _, r := range append(untimed, timed...) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		rr, ss := r.Sig.R(), r.Sig.S()
		rb, sb := rr.Bytes(), ss.Bytes()
		if !refsecp256k1.VerifyLowS(f.PublicKey(), r.Hash, rb[:], sb[:]) {
			t.Fatal("a signature does not verify")
		}
	}
	for range 9 - len(untimed) - len(timed) {
		if r := f.Sign(context.Background()); r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	if r := f.Sign(context.Background()); r.Err == nil {
		t.Fatal("signed without a presignature")
	}
	p, tl, w := f.Traffic()
	if p == 0 || tl <= p || w <= tl {
		t.Fatalf("traffic payload %d, TLS %d, wire %d", p, tl, w)
	}
}

// TestPresignLink: two parties presign over a shaped TLS link, twice, and
// count their bytes.
func TestPresignLink(t *testing.T) {
	n, _ := thresholdbench.NetworkNamed("trio")
	_, shares, err := dkls23test.Keygen(2, 3)
	if err != nil {
		t.Fatal(err)
	}
	l, err := newPresignLink(n)
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	for i := range 2 {
		if err := l.presign(shares, []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if s := l.counter.Stats(); l.payload.Load() < 4*40000 || s.Out.Bytes+s.In.Bytes < int64(l.payload.Load()) {
		t.Fatalf("payload %d, TLS %+v", l.payload.Load(), s)
	}
}
