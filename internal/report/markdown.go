package report

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
)

// Files written by WriteDir, linked from the markdown.
const (
	MarkdownFile = "report.md"
	PayloadSVG   = "latency-payload.svg"
	StagesSVG    = "stages.svg"
)

// basis says where a row's end-to-end figure comes from.
func basis(r Row) string {
	if r.ModeledMs <= 0 {
		return "measured"
	}
	share := 100 * r.ModeledMs / max(r.E2E.Avg, r.ModeledMs)
	return fmt.Sprintf("modeled %.1f%%", share)
}

// stageList renders "device 526.0 (modeled) + transport 0.040 (measured)",
// largest first, with the host time no stage claimed as "other".
func stageList(r Row) string {
	st := append([]Stage(nil), r.Stages...)
	sort.SliceStable(st, func(i, j int) bool { return st[i].Ms > st[j].Ms })
	var parts []string
	for _, s := range st {
		src := "measured"
		switch {
		case s.ModeledMs > 0 && s.ModeledMs < s.Ms*0.999:
			src = fmt.Sprintf("%s modeled", fmtMs(s.ModeledMs))
		case s.ModeledMs > 0:
			src = "modeled"
		}
		if s.ModeledMs > 0 && s.Profile != "" {
			// The profile's name; its source is listed under Profiles.
			name, _, _ := strings.Cut(s.Profile, " (")
			src += ": " + name
		}
		parts = append(parts, fmt.Sprintf("%s %s (%s)", s.Name, fmtMs(s.Ms), src))
	}
	if other := r.E2E.Avg - r.StagesMs(); other > 0.0005 && len(st) > 0 {
		parts = append(parts, fmt.Sprintf("other %s (measured)", fmtMs(other)))
	}
	if len(parts) == 0 {
		return "— (no trace)"
	}
	return strings.Join(parts, " + ")
}

func counterList(r Row) string {
	var parts []string
	for _, c := range r.Counters {
		parts = append(parts, fmt.Sprintf("%s %.4g", c.Name, c.PerOp))
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, ", ")
}

// p50/p99 cells: percentiles when there are samples, else the mean marked.
func pcell(r Row, p float64) string {
	if r.HasDist() {
		return fmtMs(p)
	}
	return "—"
}

func shareCell(r Row, timeoutMs float64) string {
	v := r.E2E.Avg
	if r.HasDist() {
		v = r.E2E.P99
	}
	return fmt.Sprintf("%.2f%%", 100*v/timeoutMs)
}

func dominantCell(r Row) string {
	d := r.Dominant()
	if d.Name == "" {
		return "—"
	}
	share := 0.0
	if r.E2E.Avg > 0 {
		share = 100 * d.Ms / r.E2E.Avg
	}
	kind := "measured"
	if d.Modeled() {
		kind = "modeled"
	}
	return fmt.Sprintf("%s (%s, %.0f%%)", d.Name, kind, share)
}

// WriteMarkdown writes the report as markdown.
func (r *Report) WriteMarkdown(w io.Writer) error {
	bw := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }
	timeoutMs := float64(r.timeout().Milliseconds())
	r.writeIntro(bw)

	p("## One sign of a vote-sized message, per signer path\n\n")
	r.writeSummary(bw, timeoutMs)
	if note := r.remoteSignerNote(); note != "" {
		p("\n%s\n", note)
	}

	r.writePhases(bw)

	if len(r.Verifies) > 0 {
		p("\n## Verification\n\n")
		r.writeVerifies(bw)
	}

	p("\n")
	r.writeComparison(bw)

	p("\n")
	if err := WriteLedgerFit(bw); err != nil {
		return err
	}

	p("\n")
	if err := r.writeThreshold(bw); err != nil {
		return err
	}
	r.writeOpenPGP(bw)
	p("\n")
	r.writeThresholdECDSA(bw)

	p("\n## Charts\n\n")
	p("![end-to-end latency against payload size, per signer path](%s)\n\n", PayloadSVG)
	p("![stages of one vote-sized sign per signer path, with the %s timeout](%s)\n", r.timeout(), StagesSVG)

	r.writeRows(bw, timeoutMs)

	if profiles := r.profiles(); len(profiles) > 0 {
		p("\n## Profiles\n\nModeled time comes from these latency profiles, named after `modeled:` in the tables; each names the section of [docs/latency-profiles.md](../latency-profiles.md) its figures come from:\n\n")
		for _, pr := range profiles {
			p("- %s\n", mdEscape(pr))
		}
	}
	return bw.Flush()
}

// writeIntro writes the title, when and where the rows were measured,
// what measured and modeled mean, and the report's notes.
func (r *Report) writeIntro(bw *bufio.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }
	title := r.Title
	if title == "" {
		title = "signerkit: where the milliseconds of a signature go"
	}
	p("# %s\n\n", title)
	if !r.Generated.IsZero() {
		p("Generated %s", r.Generated.UTC().Format("2006-01-02 15:04 MST"))
		if r.Host != "" {
			p(" on %s", r.Host)
		}
		p(".")
	}
	if r.Source != "" {
		p(" Rows from %s.", r.Source)
	}
	if r.SimMode != "" {
		p(" Simulated devices: time %s (SIGNERKIT_SIM=%s).", r.SimMode, r.SimMode)
	}
	p("\n\n")
	p("**measured** figures are this host's clock; **modeled** figures come from a device's latency profile " +
		"(sources listed under Profiles) and are what a caller of the real device would wait. " +
		"e2e is measured plus modeled time; the stages add up to it, with host time outside every stage as `other`. ")
	if slices.ContainsFunc(r.Rows, func(row Row) bool { return row.Source == "run" }) {
		// Only Run's signs get such a context; BenchmarkSign's do not.
		p("Signs of a run get a context that can be cancelled, as a validator's do: a backend that honours it around a call " +
			"it cannot interrupt (pkcs11's module calls) makes that call on a goroutine, and the hand-off is most of its `other`. ")
	}
	p("Share is of a %s consensus timeout, taken at p99 (at the mean for rows from `go test -bench`).\n\n", r.timeout())
	for _, n := range r.Notes {
		p("- %s\n", n)
	}
	if len(r.Notes) > 0 {
		p("\n")
	}
}

// writePhases writes the consensus phases section, when the report has
// phases.
func (r *Report) writePhases(bw *bufio.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }
	if len(r.Phases) == 0 {
		return
	}
	p("\n## Consensus phases at consecutive heights\n\n")
	p("Proposal, prevote and precommit sign bytes of a tm2 chain (`test11`) at rising heights, signed in order as a validator does; milliseconds per sign.\n\n")
	p("| signer path | phase | sign bytes | count | min | p50 | p99 | max | basis |\n")
	p("|---|---|--:|--:|--:|--:|--:|--:|---|\n")
	for _, ph := range r.Phases {
		b := "measured"
		if ph.Modeled {
			b = "measured + modeled"
		}
		p("| %s | %s | %d | %d | %s | %s | %s | %s | %s |\n", mdEscape(ph.Backend), ph.Phase, ph.Bytes, ph.Dist.N,
			fmtMs(ph.Dist.Min), fmtMs(ph.Dist.P50), fmtMs(ph.Dist.P99), fmtMs(ph.Dist.Max), b)
	}
}

// writeRows writes every row, a table per signer path.
func (r *Report) writeRows(bw *bufio.Writer, timeoutMs float64) {
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }
	p("\n## Every row\n")
	for _, path := range r.Paths() {
		p("\n### %s\n\n", mdEscape(path))
		p("| payload B | p50 ms | p99 ms | mean ms | basis | share | dominant | stages (ms per sign) | counts per sign |\n")
		p("|--:|--:|--:|--:|---|--:|---|---|---|\n")
		for _, row := range r.Rows {
			if row.Path() != path {
				continue
			}
			p("| %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", row.Payload, pcell(row, row.E2E.P50), pcell(row, row.E2E.P99),
				fmtMs(row.E2E.Avg), basis(row), shareCell(row, timeoutMs), dominantCell(row), mdEscape(stageList(row)), mdEscape(counterList(row)))
		}
	}
}

// writeVerifies writes the verification table: one line per case, one
// column per payload, the mean µs of one verification.
func (r *Report) writeVerifies(bw *bufio.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }
	var sizes []int
	var cases []string
	mean := map[string]map[int]float64{}
	for _, row := range r.Verifies {
		if !slices.Contains(sizes, row.Payload) {
			sizes = append(sizes, row.Payload)
		}
		if mean[row.Backend] == nil {
			mean[row.Backend] = map[int]float64{}
			cases = append(cases, row.Backend)
		}
		mean[row.Backend][row.Payload] = row.E2E.Avg * 1000
	}
	slices.Sort(sizes)
	p("The library's own verify call on a signature made before the clock starts (`BenchmarkVerify/alg=…/payload=…`), " +
		"hashing the message included: µs per verification, mean, measured on this host.\n\n")
	p("| algorithm |")
	for _, s := range sizes {
		p(" %s |", sizeName(float64(s)))
	}
	p("\n|---|%s\n", strings.Repeat("--:|", len(sizes)))
	for _, c := range cases {
		p("| %s |", mdEscape(c))
		for _, s := range sizes {
			if v, ok := mean[c][s]; ok {
				p(" %s |", fmtMs(v))
			} else {
				p(" — |")
			}
		}
		p("\n")
	}
}

func (r *Report) writeSummary(bw *bufio.Writer, timeoutMs float64) {
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }
	p("| signer path | payload B | p50 ms | p99 ms | basis | share of %s | dominant stage | stages that add up to it (ms per sign) | stages/e2e |\n", r.timeout())
	p("|---|--:|--:|--:|---|--:|---|---|--:|\n")
	for _, row := range r.Reference() {
		p50, p99 := pcell(row, row.E2E.P50), pcell(row, row.E2E.P99)
		if !row.HasDist() {
			p50 = fmtMs(row.E2E.Avg) + " (mean)"
		}
		cov := "—"
		if len(row.Stages) > 0 {
			cov = fmt.Sprintf("%.1f%%", 100*row.Coverage())
		}
		p("| %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", mdEscape(row.Path()), row.Payload, p50, p99, basis(row),
			shareCell(row, timeoutMs), dominantCell(row), mdEscape(stageList(row)), cov)
	}
}

// GnokmsAddedMs is what gno's gnokms sidecar added to every sign in the
// latency analysis (docs/latency-profiles.md §1): the reference for the
// remote-signer rows.
const GnokmsAddedMs = 0.5

// remoteSignerNote says what the remote-signer rows (privval-…) add to
// the in-process key they serve, beside gnokms's figure, or "" when the
// report has none.
func (r *Report) remoteSignerNote() string {
	mid := func(row Row) float64 {
		if row.HasDist() {
			return row.E2E.P50
		}
		return row.E2E.Avg
	}
	var base *Row
	var pv []Row
	for _, row := range r.Reference() {
		switch {
		case row.Backend == "inprocess-ed25519":
			base = &row
		case strings.HasPrefix(row.Backend, "privval-"):
			pv = append(pv, row)
		}
	}
	if len(pv) == 0 {
		return ""
	}
	added := ""
	if base != nil {
		var parts []string
		for _, row := range pv {
			parts = append(parts, fmt.Sprintf("%s %s", mdEscape(row.Path()), fmtMs(mid(row)-mid(*base))))
		}
		added = " Over `inprocess-ed25519` they add (ms per sign, p50, or the mean for rows from `go test -bench`): " + strings.Join(parts, ", ") + "."
	}
	return "Remote signers: the `privval-*` rows serve an in-process Ed25519 key through package privval to a validator in the same process " +
		"(CometBFT privval protocol in its gno-tmkms dialect, or gno's native remote-signer protocol; SecretConnection over TCP; " +
		"`-durable`: the guard's state synced to disk once per sign)." + added +
		fmt.Sprintf(" For reference, gno's gnokms sidecar added ~%.1f ms per sign in the latency analysis ([docs/latency-profiles.md](../latency-profiles.md) §1).", GnokmsAddedMs)
}

func (r *Report) profiles() []string {
	seen := map[string]bool{}
	var out []string
	for _, row := range r.Rows {
		for _, s := range row.Stages {
			if s.ModeledMs > 0 && s.Profile != "" && !seen[s.Profile] {
				seen[s.Profile] = true
				out = append(out, s.Profile)
			}
		}
	}
	sort.Strings(out)
	return out
}
