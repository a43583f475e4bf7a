package signerstats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestBucketsCoverEveryValue(t *testing.T) {
	prevLo := uint64(0)
	for i := 1; i < histBuckets; i++ {
		lo, w := bucketRange(i)
		if lo <= prevLo {
			t.Fatalf("bucket %d starts at %d, not after %d", i, lo, prevLo)
		}
		if got := bucketOf(lo); got != i {
			t.Fatalf("bucketOf(%d) = %d, want %d", lo, got, i)
		}
		if got := bucketOf(lo + w - 1); got != i {
			t.Fatalf("bucketOf(%d) = %d, want %d (last of bucket)", lo+w-1, got, i)
		}
		if i >= histLinear && float64(w)/float64(lo) > 1.0/histHalfSubs+1e-12 {
			t.Fatalf("bucket %d is %d wide at %d: coarser than 1/%d", i, w, lo, histHalfSubs)
		}
		prevLo = lo
	}
	if got := bucketOf(1<<63 - 1); got != histBuckets-1 {
		t.Fatalf("bucketOf(max) = %d, want %d", got, histBuckets-1)
	}
}

func TestHistogramQuantilesMatchExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 10, 99, 1000, 12345} {
		var h histogram
		vals := make([]time.Duration, n)
		for i := range vals {
			// Log-uniform from 1 µs to 10 s, the range of sign latencies.
			vals[i] = time.Duration(1e3 * math.Pow(10, r.Float64()*7))
			h.record(vals[i])
		}
		slices.Sort(vals)
		for _, q := range []float64{0.01, 0.5, 0.9, 0.99, 1} {
			rank := int(q*float64(n) + 0.999999999)
			want := vals[max(rank, 1)-1]
			got := h.quantile(q)
			if diff := float64(got-want) / float64(want); diff > 1.0/128 || diff < -1.0/128 {
				t.Errorf("n=%d q=%v: got %v, exact %v (off by %.3f%%)", n, q, got, want, diff*100)
			}
		}
		if h.min != vals[0] || h.max != vals[n-1] || h.n != uint64(n) {
			t.Errorf("n=%d: min/max/n = %v/%v/%d, want %v/%v/%d", n, h.min, h.max, h.n, vals[0], vals[n-1], n)
		}
	}
}

func TestHistogramSmallValuesExact(t *testing.T) {
	var h histogram
	for _, v := range []time.Duration{5, 7, 9, 100} {
		h.record(v)
	}
	if got := h.quantile(0.5); got != 7 {
		t.Errorf("p50 = %v, want 7ns", got)
	}
	if got := h.quantile(0.75); got != 9 {
		t.Errorf("p75 = %v, want 9ns", got)
	}
}
