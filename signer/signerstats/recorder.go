// Package signerstats keeps latency statistics per label: counts, errors,
// and percentiles from a log-linear histogram, without a lock-free
// promise or any I/O. signertrace.Instrumented files each sign in one; the
// privval endpoint and server file each request. It stands apart from
// package signer as net/http/httptrace stands apart from net/http: the
// contract does not need it.
package signerstats

import (
	"slices"
	"strings"
	"sync"
	"time"
)

// Recorder files durations under labels. The zero Recorder is ready to
// use; its counting begins at its first Record. It is safe for
// concurrent use: Record takes a short lock.
type Recorder struct {
	mu    sync.Mutex
	stats map[string]*labelStats
	since time.Time
}

type labelStats struct {
	h      histogram
	errors uint64
}

// Record files one operation under label: its duration when err is nil,
// else one error (errors are kept out of the latency figures).
func (r *Recorder) Record(label string, d time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stats == nil {
		r.stats = make(map[string]*labelStats)
	}
	if r.since.IsZero() {
		r.since = time.Now()
	}
	st := r.stats[label]
	if st == nil {
		st = &labelStats{}
		r.stats[label] = st
	}
	if err != nil {
		st.errors++
		return
	}
	st.h.record(d)
}

// Start sets the time counting began, for a Recorder that should count
// from its owner's creation rather than its first Record.
func (r *Recorder) Start(t time.Time) {
	r.mu.Lock()
	r.since = t
	r.mu.Unlock()
}

// Reset clears the statistics; counting begins again now.
func (r *Recorder) Reset() {
	r.mu.Lock()
	r.stats = nil
	r.since = time.Now()
	r.mu.Unlock()
}

// Snapshot returns the statistics so far, one entry per label, sorted by
// label.
func (r *Recorder) Snapshot() Snapshot {
	r.mu.Lock()
	defer r.mu.Unlock()
	snap := Snapshot{Since: r.since, Taken: time.Now()}
	for label, st := range r.stats {
		h := &st.h
		ls := LabelStats{Label: label, Count: h.n, Errors: st.errors, Total: h.sum, Min: h.min, Max: h.max}
		if h.n > 0 {
			ls.P50, ls.P90, ls.P99 = h.quantile(0.50), h.quantile(0.90), h.quantile(0.99)
		}
		snap.Labels = append(snap.Labels, ls)
	}
	slices.SortFunc(snap.Labels, func(a, b LabelStats) int { return strings.Compare(a.Label, b.Label) })
	return snap
}
