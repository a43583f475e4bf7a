package report

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"time"

	"github.com/signerkit/signerkit/internal/bench"
	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signbytes/signbytestest"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// RunConfig selects and sizes the scenarios Run runs.
type RunConfig struct {
	// Backends selects backends by name; nil means all that are not
	// skipped.
	Backends *regexp.Regexp
	// Payloads and Chunks replace each backend's own sizes; sizes a backend
	// does not list are still run when given here. Nil keeps the backend's.
	Payloads, Chunks []int
	// RowBudget is the wall time to spend signing one row (default 100 ms);
	// a row signs at least MinSigns (default 3) and at most MaxSigns
	// (default 2000) times.
	RowBudget          time.Duration
	MinSigns, MaxSigns int
	// Heights is how many consecutive heights the phase run signs on each
	// Ed25519 path (default 40; 0 with NoPhases skips it); PhaseBudget caps
	// the wall time of each path's run (default 2 s).
	Heights     int
	PhaseBudget time.Duration
	NoPhases    bool
	// Vote returns the sign bytes of a phase ("proposal", "prevote",
	// "precommit") at a height; nil skips the phase run.
	Vote func(phase string, height int64) []byte
	// Verify selects the verification cases (bench.VerifyCases) by name;
	// nil means all that are not skipped. NoVerify runs none. Payloads,
	// when set, replaces their sizes too.
	Verify   *regexp.Regexp
	NoVerify bool
	// CompareSamples is the least number of samples each row of the BLS
	// and Ed25519 comparison (Compared) takes, whatever RowBudget and
	// MaxSigns say, so its means are over as many samples as the published
	// ones; 0 leaves those rows to the budget like the others.
	CompareSamples int
	// ThresholdRows selects the rows of package threshold's 2-of-3 FROST
	// signer (ThresholdRowNames) by name; nil means those
	// DefaultThresholdRows selects. NoThreshold runs none.
	// ThresholdBenchtime is each such row's benchtime, in `go test
	// -benchtime` syntax ("1s", "300x"); empty means
	// DefaultThresholdBenchtime.
	ThresholdRows      *regexp.Regexp
	NoThreshold        bool
	ThresholdBenchtime string
	// Progress, when set, receives a line per row.
	Progress io.Writer
}

func (c *RunConfig) defaults() {
	if c.RowBudget <= 0 {
		c.RowBudget = 100 * time.Millisecond
	}
	if c.MinSigns <= 0 {
		c.MinSigns = 3
	}
	if c.MaxSigns <= 0 {
		c.MaxSigns = 2000
	}
	if c.Heights <= 0 {
		c.Heights = 40
	}
	if c.PhaseBudget <= 0 {
		c.PhaseBudget = 2 * time.Second
	}
	if c.ThresholdBenchtime == "" {
		c.ThresholdBenchtime = DefaultThresholdBenchtime
	}
}

func (c *RunConfig) logf(format string, a ...any) {
	if c.Progress != nil {
		fmt.Fprintf(c.Progress, format+"\n", a...)
	}
}

// Selected returns the registered backends cfg selects, with the reason
// each one left out was skipped.
func (c RunConfig) Selected() (run []bench.Backend, skipped map[string]string) {
	skipped = map[string]string{}
	for _, be := range bench.Backends() {
		if c.Backends != nil && !c.Backends.MatchString(be.Name) {
			continue
		}
		if reason := be.SkipReason(); reason != "" {
			skipped[be.Name] = reason
			continue
		}
		run = append(run, be)
	}
	return run, skipped
}

// Run runs the scenarios: every selected backend over its payloads (and
// chunk sizes), each sign traced on its own so the report has per-sign
// percentiles, the verification cases, the consensus phase run on the
// Ed25519 paths, then the threshold rows (RunThreshold).
func Run(ctx context.Context, cfg RunConfig) (*Report, error) {
	cfg.defaults()
	if !cfg.NoThreshold {
		// Before anything runs, not minutes later.
		if err := CheckBenchtime(cfg.ThresholdBenchtime); err != nil {
			return nil, fmt.Errorf("report: threshold rows: %w", err)
		}
	}
	backends, skipped := cfg.Selected()
	rep := &Report{Source: "a run of the scenarios (per-sign samples)"}
	for name, reason := range skipped {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%s skipped: %s", name, reason))
	}
	slices.Sort(rep.Notes)
	for _, be := range backends {
		sizes := be.Sizes()
		if cfg.Payloads != nil {
			sizes = cfg.Payloads
		}
		chunks := be.Chunks
		if len(chunks) > 0 && cfg.Chunks != nil {
			chunks = cfg.Chunks
		}
		if len(chunks) == 0 {
			chunks = []int{0}
		}
		for _, size := range sizes {
			for _, chunk := range chunks {
				row, err := RunRow(ctx, be, bench.Params{Payload: size, Chunk: chunk}, cfg)
				if err != nil {
					return nil, err
				}
				cfg.logf("%-40s %5d B  p50 %s ms  p99 %s ms  (%d signs)", row.Path(), size, fmtMs(row.E2E.P50), fmtMs(row.E2E.P99), row.E2E.N)
				rep.Rows = append(rep.Rows, row)
			}
		}
	}
	if !cfg.NoVerify {
		for _, c := range bench.VerifyCases() {
			if cfg.Verify != nil && !cfg.Verify.MatchString(c.Name) {
				continue
			}
			if reason := c.SkipReason(); reason != "" {
				rep.Notes = append(rep.Notes, fmt.Sprintf("verify %s skipped: %s", c.Name, reason))
				continue
			}
			sizes := c.Sizes()
			if cfg.Payloads != nil {
				sizes = cfg.Payloads
			}
			for _, size := range sizes {
				row, err := RunVerify(ctx, c, size, cfg)
				if err != nil {
					return nil, err
				}
				cfg.logf("verify %-33s %7d B  p50 %s ms  p99 %s ms  (%d verifications)", c.Name, size, fmtMs(row.E2E.P50), fmtMs(row.E2E.P99), row.E2E.N)
				rep.Verifies = append(rep.Verifies, row)
			}
		}
	}
	if !cfg.NoPhases && cfg.Vote != nil {
		for _, be := range backends {
			if !be.Validator {
				continue
			}
			phases, err := RunPhases(ctx, be, cfg)
			if err != nil {
				return nil, err
			}
			rep.Phases = append(rep.Phases, phases...)
		}
	}
	if !cfg.NoThreshold {
		th, err := RunThreshold(ctx, cfg)
		if err != nil {
			return nil, err
		}
		rep.Threshold = th
		rep.ThresholdSource = fmt.Sprintf("measured on this report's host: one run of each row, for a benchtime of %s, through testing.Benchmark", cfg.ThresholdBenchtime)
	}
	return rep, nil
}

// RunRow opens be for p and signs until cfg's budget is spent, tracing
// each sign on its own.
func RunRow(ctx context.Context, be bench.Backend, p bench.Params, cfg RunConfig) (Row, error) {
	cfg.defaults()
	row := Row{Backend: be.Name, Payload: p.Payload, Chunk: p.Chunk, Source: "run"}
	inst, err := be.Open(ctx, p)
	if err != nil {
		return row, fmt.Errorf("report: open %s: %w", row.Path(), err)
	}
	if inst.Close != nil {
		defer inst.Close()
	}
	next := be.MessageSource(p.Payload)
	// The first sign is left out, as the latency analysis left out the
	// first sign after a device wakes (the on-device confirmation).
	if _, err := inst.Sign(ctx, next()); err != nil {
		return row, fmt.Errorf("report: %s, %d B: first sign: %w", row.Path(), p.Payload, err)
	}
	// One collector for the whole row, its context made before the clock
	// starts; a sign's own end-to-end time is its wall time plus the
	// accounted (modeled, not slept) time it added to the collector.
	var col signertrace.Collector
	tctx, cancel := signContext(ctx, &col)
	defer cancel()
	var e2e []float64
	var wall, accounted time.Duration
	var msg, sig []byte
	minSigns, maxSigns := cfg.samples(Compared(SignOp, be.Name, p.Payload) && p.Chunk == 0)
	for len(e2e) < maxSigns && (len(e2e) < minSigns || wall < cfg.RowBudget) {
		msg = next()
		start := time.Now()
		sig, err = inst.Sign(tctx, msg)
		d := time.Since(start)
		if err != nil {
			return row, fmt.Errorf("report: %s, %d B: sign: %w", row.Path(), p.Payload, err)
		}
		wall += d
		acc := col.Summary().Accounted()
		e2e = append(e2e, float64(d+acc-accounted)/float64(time.Millisecond))
		accounted = acc
	}
	total := col.Summary()
	if err := inst.Verify(be, msg, sig); err != nil {
		return row, fmt.Errorf("report: %s, %d B: %w", row.Path(), p.Payload, err)
	}
	n := float64(len(e2e))
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / n }
	row.E2E = NewDist(e2e)
	row.HostMs = ms(wall)
	row.ModeledMs = ms(total.Modeled())
	for _, st := range signertrace.Stages() {
		t := total.Stage(st)
		if t.Reports == 0 {
			continue
		}
		row.Stages = append(row.Stages, Stage{Name: st.String(), Ms: ms(total.Exclusive(st)), ModeledMs: ms(t.Modeled), Profile: t.Profile})
	}
	for _, c := range signertrace.Counters() {
		if v := total.Count(c); v != 0 {
			row.Counters = append(row.Counters, Counter{Name: c.String(), PerOp: float64(v) / n})
		}
	}
	return row, nil
}

// samples returns the least and the most samples a row takes: MinSigns
// and MaxSigns, raised to CompareSamples for a row of the comparison.
func (c *RunConfig) samples(compared bool) (least, most int) {
	least, most = c.MinSigns, c.MaxSigns
	if compared && c.CompareSamples > 0 {
		least, most = max(least, c.CompareSamples), max(most, c.CompareSamples)
	}
	return least, most
}

// RunVerify sets c up for a message of size bytes (untimed), verifies once
// before the clock starts, then verifies until cfg's budget is spent,
// timing each verification on its own. Every verification must succeed.
func RunVerify(ctx context.Context, c bench.VerifyCase, size int, cfg RunConfig) (Row, error) {
	cfg.defaults()
	row := Row{Backend: c.Name, Payload: size, Source: "run"}
	verify, err := c.Setup(size)
	if err != nil {
		return row, fmt.Errorf("report: verify %s, %d B: setup: %w", c.Name, size, err)
	}
	if err := verify(); err != nil {
		return row, fmt.Errorf("report: verify %s, %d B: first verification: %w", c.Name, size, err)
	}
	least, most := cfg.samples(Compared(VerifyOp, c.Name, size))
	var samples []float64
	var wall time.Duration
	for len(samples) < most && (len(samples) < least || wall < cfg.RowBudget) {
		if err := ctx.Err(); err != nil {
			return row, err
		}
		start := time.Now()
		err := verify()
		d := time.Since(start)
		if err != nil {
			return row, fmt.Errorf("report: verify %s, %d B: %w", c.Name, size, err)
		}
		wall += d
		samples = append(samples, float64(d)/float64(time.Millisecond))
	}
	row.E2E = NewDist(samples)
	row.HostMs = row.E2E.Avg
	return row, nil
}

// signContext is the context a row's signs get: traced into col, and
// cancellable, as a validator's signs are (they carry a deadline), so the
// report shows what honouring one costs a backend whose device call
// cannot be interrupted (pkcs11 runs its module calls on a goroutine).
func signContext(ctx context.Context, col *signertrace.Collector) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	return col.WithContext(ctx), cancel
}

// Phases signed at each height, in a validator's order; the proposal only
// at every fourth height, as one of four validators proposes in turn.
var phaseOrder = []string{"proposal", "prevote", "precommit"}

// RunPhases signs consecutive heights on be, as a validator does, and
// returns per-phase statistics. The first sign is left out (see RunRow).
func RunPhases(ctx context.Context, be bench.Backend, cfg RunConfig) ([]Phase, error) {
	cfg.defaults()
	p := bench.Params{Payload: len(cfg.Vote("prevote", 1))}
	if len(be.Chunks) > 0 {
		p.Chunk = be.Chunks[len(be.Chunks)-1]
	}
	inst, err := be.Open(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("report: open %s: %w", be.Name, err)
	}
	if inst.Close != nil {
		defer inst.Close()
	}
	samples := map[string][]float64{}
	sizes := map[string]int{}
	modeled := false
	var col signertrace.Collector
	tctx, cancel := signContext(ctx, &col) // made once, outside the timed calls
	defer cancel()
	var wall time.Duration
	first := true
	for h := int64(1); h <= int64(cfg.Heights) && wall < cfg.PhaseBudget; h++ {
		for _, ph := range phaseOrder {
			if ph == "proposal" && h%4 != 1 {
				continue
			}
			msg := cfg.Vote(ph, h)
			col.Reset()
			start := time.Now()
			sig, err := inst.Sign(tctx, msg)
			d := time.Since(start)
			if err != nil {
				return nil, fmt.Errorf("report: %s: %s at height %d: %w", be.Name, ph, h, err)
			}
			if err := inst.Verify(be, msg, sig); err != nil {
				return nil, fmt.Errorf("report: %s: %s at height %d: %w", be.Name, ph, h, err)
			}
			wall += d
			if first {
				first = false
				continue
			}
			s := col.Summary()
			modeled = modeled || s.Modeled() > 0
			samples[ph] = append(samples[ph], float64(s.EndToEnd(d))/float64(time.Millisecond))
			sizes[ph] = len(msg)
		}
	}
	name := Row{Backend: be.Name, Chunk: p.Chunk}.Path()
	var out []Phase
	for _, ph := range phaseOrder {
		if len(samples[ph]) == 0 {
			continue
		}
		out = append(out, Phase{Backend: name, Phase: ph, Bytes: sizes[ph], Dist: NewDist(samples[ph]), Modeled: modeled})
	}
	return out, nil
}

// Vote returns the sign bytes a validator signs in phase at height h on
// the "test11" chain, all at round 0 so that a device enforcing the
// double-sign rules accepts each after the one before: a 119-byte
// proposal, then a 108-byte prevote and precommit for the same block.
func Vote(phase string, h int64) []byte {
	m := signbytes.Message{Height: h, BlockID: signbytestest.SampleBlockID(), Timestamp: signbytestest.SampleTime, ChainID: signbytestest.SampleChainID}
	switch phase {
	case "proposal":
		m.Phase, m.POLRound = signbytes.Proposal, -1
		return signbytestest.Bytes(m)
	case "prevote":
		m.Phase = signbytes.Prevote
		return signbytestest.Bytes(m)
	case "precommit":
		m.Phase = signbytes.Precommit
		return signbytestest.Bytes(m)
	}
	panic("report: unknown phase " + phase)
}
