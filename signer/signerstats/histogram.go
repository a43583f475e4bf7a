package signerstats

import (
	"math/bits"
	"time"
)

// histogram records durations in log-linear buckets: exact below 128 ns,
// then 64 buckets per power of two, so a quantile read from it is within
// 1/128 of the true value (it reports a bucket's midpoint). It covers every
// non-negative time.Duration in 3,712 counters, whatever the number of
// samples; count, sum, min and max are exact.
type histogram struct {
	counts   []uint64
	n        uint64
	sum      time.Duration
	min, max time.Duration
}

const (
	histSubBits  = 6 // 64 sub-buckets per power of two
	histLinear   = 1 << (histSubBits + 1)
	histBuckets  = (63 - histSubBits - 1 + 2) << histSubBits // durations are < 2^63
	histHalfSubs = 1 << histSubBits
)

func bucketOf(v uint64) int {
	if v < histLinear {
		return int(v)
	}
	e := bits.Len64(v) - histSubBits - 1 // ≥ 1
	return e<<histSubBits + int(v>>e)
}

// bucketRange returns the smallest value in bucket i and the bucket's width.
func bucketRange(i int) (lo, width uint64) {
	if i < histLinear {
		return uint64(i), 1
	}
	e := i>>histSubBits - 1
	m := uint64(i - e<<histSubBits)
	return m << e, 1 << e
}

func (h *histogram) record(d time.Duration) {
	if d < 0 {
		d = 0
	}
	if h.counts == nil {
		h.counts = make([]uint64, histBuckets)
	}
	h.counts[bucketOf(uint64(d))]++
	if h.n == 0 || d < h.min {
		h.min = d
	}
	if d > h.max {
		h.max = d
	}
	h.n++
	h.sum += d
}

// quantile returns the q-quantile (0 < q ≤ 1) by the nearest-rank rule.
func (h *histogram) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q*float64(h.n) + 0.999999999) // ceil without float surprises at exact ranks
	if rank < 1 {
		rank = 1
	}
	if rank > h.n {
		rank = h.n
	}
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			lo, w := bucketRange(i)
			v := time.Duration(lo + w/2)
			if w == 1 {
				v = time.Duration(lo)
			}
			return min(max(v, h.min), h.max)
		}
	}
	return h.max
}
