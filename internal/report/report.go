// Package report turns benchmark results into the decision report of
// cmd/signerbench: markdown tables that say, per signer path, what one sign
// costs, which stage dominates and how much of a consensus timeout it
// uses, and SVG charts of latency against payload and of the stages.
//
// Rows come either from a run of the scenarios (Run, with a per-sign
// distribution) or from `go test -bench` output (ParseBench, means only).
// A section on package threshold's FROST 2-of-3 signer takes the rows of
// internal/thresholdbench, run through testing.Benchmark (RunThreshold) or
// read from `go test -bench` output (thresholdbench.ParseResults), and
// sets published threshold figures beside them, marked as published.
// Every figure keeps whether it was measured on this host or modeled from
// a latency profile, and the report says so next to it.
package report

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/signerkit/signerkit/internal/thresholdbench"
)

// Stage is one stage of a row, per sign.
type Stage struct {
	Name      string  // "device", "transport", …
	Ms        float64 // the stage's own time (measured + modeled − slept inside it), mean per sign
	ModeledMs float64 // the part of Ms that came from a latency profile
	Profile   string  // the profile of the modeled part and its source, when known
}

// Modeled reports whether the stage's time came (mostly) from a profile.
func (s Stage) Modeled() bool { return s.ModeledMs > 0 && s.ModeledMs >= s.Ms/2 }

// Counter is a counted quantity per sign (apdus, hid-reports, …).
type Counter struct {
	Name  string
	PerOp float64
}

// Dist is a distribution of per-sign latencies in milliseconds.
type Dist struct {
	N                       int
	Min, P50, P99, Max, Avg float64
}

// NewDist summarises samples (milliseconds). It sorts samples in place.
func NewDist(samples []float64) Dist {
	if len(samples) == 0 {
		return Dist{}
	}
	sort.Float64s(samples)
	var sum float64
	for _, v := range samples {
		sum += v
	}
	return Dist{
		N:   len(samples),
		Min: samples[0],
		P50: percentile(samples, 50),
		P99: percentile(samples, 99),
		Max: samples[len(samples)-1],
		Avg: sum / float64(len(samples)),
	}
}

// percentile is the nearest-rank percentile of sorted samples.
func percentile(sorted []float64, p float64) float64 {
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// Row is one signer path at one payload (and chunk size), or, in
// Report.Verifies, one verification case at one payload.
type Row struct {
	Backend   string // the backend; for a verification row, the case ("ed25519")
	Payload   int
	Chunk     int    // 0 when the path has no chunk size
	Source    string // "run" (per-sign samples here) or "bench" (go test -bench means)
	HostMs    float64
	ModeledMs float64 // modeled time per sign, slept or accounted
	E2E       Dist    // per-sign end-to-end latency; from bench output only Avg is known
	Stages    []Stage
	Counters  []Counter
}

// Path names the signer path of the row: backend, plus chunk when set.
func (r Row) Path() string {
	if r.Chunk > 0 {
		return fmt.Sprintf("%s chunk=%d", r.Backend, r.Chunk)
	}
	return r.Backend
}

// HasDist reports whether the row has per-sign percentiles.
func (r Row) HasDist() bool { return r.E2E.N > 0 }

// StagesMs returns the sum of the row's stages.
func (r Row) StagesMs() float64 {
	var s float64
	for _, st := range r.Stages {
		s += st.Ms
	}
	return s
}

// Dominant returns the stage with the most time, or a zero Stage.
func (r Row) Dominant() Stage {
	var best Stage
	for _, st := range r.Stages {
		if st.Ms > best.Ms {
			best = st
		}
	}
	return best
}

// Coverage is the share of the mean end-to-end latency that the stages
// account for (1 when they add up to it exactly).
func (r Row) Coverage() float64 {
	if r.E2E.Avg <= 0 {
		return 0
	}
	return r.StagesMs() / r.E2E.Avg
}

// Phase is the latency of one consensus phase on one signer path over a
// run of consecutive heights.
type Phase struct {
	Backend string
	Phase   string // "proposal", "prevote", "precommit"
	Bytes   int    // size of the phase's sign bytes
	Dist    Dist
	Modeled bool // whether modeled time is part of the figures
}

// Report is everything cmd/signerbench writes.
type Report struct {
	Title     string
	Generated time.Time
	Host      string        // e.g. "linux/amd64, 2 CPUs, go1.26.8"
	SimMode   string        // "accounted" or "realtime"
	Timeout   time.Duration // the consensus timeout shares are taken of; 1 s when zero
	Source    string        // what the rows came from, for the header
	Rows      []Row
	Verifies  []Row // BenchmarkVerify's cases: Backend is the case, E2E the host time of one verification
	Phases    []Phase
	Notes     []string // printed under the header
	// Threshold are the rows of package threshold's 2-of-3 FROST signer
	// (thresholdbench's BenchmarkThreshold), none when they were not run;
	// ThresholdSource says how they were taken.
	Threshold       []thresholdbench.Result
	ThresholdSource string
	// ThresholdECDSA are the rows of the threshold ECDSA signers
	// (ECDSASchemes) by their Row, read from `go test -bench` output;
	// a scheme without rows has none.
	ThresholdECDSA map[string][]thresholdbench.Result
}

func (r *Report) timeout() time.Duration {
	if r.Timeout <= 0 {
		return time.Second
	}
	return r.Timeout
}

// Paths returns the distinct signer paths in the order of first appearance.
func (r *Report) Paths() []string {
	var out []string
	seen := map[string]bool{}
	for _, row := range r.Rows {
		if p := row.Path(); !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// Reference returns, for each path, the row whose payload is closest to a
// tm2 vote (108 B, the test11 prevote), preferring the larger on a tie.
func (r *Report) Reference() []Row {
	const vote = 108
	best := map[string]Row{}
	for _, row := range r.Rows {
		p := row.Path()
		cur, ok := best[p]
		if !ok || closer(row.Payload, cur.Payload, vote) {
			best[p] = row
		}
	}
	var out []Row
	for _, p := range r.Paths() {
		out = append(out, best[p])
	}
	return out
}

func closer(a, b, target int) bool {
	da, db := abs(a-target), abs(b-target)
	return da < db || (da == db && a > b)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// fmtMs prints milliseconds with sensible precision across six decades.
func fmtMs(v float64) string {
	switch a := math.Abs(v); {
	case a == 0:
		return "0"
	case a < 0.01:
		return fmt.Sprintf("%.4f", v)
	case a < 1:
		return fmt.Sprintf("%.3f", v)
	case a < 100:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.1f", v)
	}
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
