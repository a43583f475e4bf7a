package report

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/signerkit/signerkit/internal/thresholdbench"
)

// ThresholdSVG is the chart of FROST 2-of-3 online signing latency against
// round trip time, written by WriteDir when the report has rows it plots.
const ThresholdSVG = "threshold-latency.svg"

// thresholdDoc is the page with the threshold rows' method, the sources
// of the network profiles and the long run, relative to the report.
const thresholdDoc = "../threshold.md"

// ThresholdReference is a published figure of another threshold signer,
// shown beside ours and never as one of ours.
type ThresholdReference struct {
	Scheme     string
	Online     string // online signing latency, as published
	Bytes      string // online bytes
	Presigning string
	MeasuredOn string
	// Chart is the label of the figure in thresholdbench.References, the
	// chart's references, whose latencies Online states.
	Chart string
}

// ThresholdReferences are the published figures the section puts beside
// ours: the DKLS23 and CGGMP21 rows of the published 2-of-3 threshold
// ECDSA comparison, and what horcrux's users report.
var ThresholdReferences = []ThresholdReference{
	{"DKLS23 (2-of-3 threshold ECDSA)", "~7.5 ms p50", "4.4 KB; 96 B protocol payload per party",
		"120 KiB and 0.11 core-s per presignature; 316/s sustained", "n2d-standard-16", "DKLS23 online p50, published"},
	{"CGGMP21 (2-of-3 threshold ECDSA)", "~26 ms p50", "4–7 KB",
		"88 KiB and 3.0 core-s per presignature", "n2d-standard-16", "CGGMP21 online p50, published"},
	{"horcrux (Cosmos validators)", "300–800 ms per vote, as its users report with cosigners 100–200 ms apart (horcrux issue #214)", "–",
		"–", "users' validator machines", "horcrux, users' reports (horcrux #214)"},
}

// hasThresholdChart reports whether the report has threshold rows the
// chart plots.
func (r *Report) hasThresholdChart() bool { return thresholdbench.Charted(r.Threshold) }

// writeThreshold writes the section on package threshold's FROST 2-of-3
// signer: our rows' tables, the chart, the goal at one sign in flight and,
// apart and marked as such, the published figures. Without rows it says
// they were not measured.
func (r *Report) writeThreshold(bw *bufio.Writer) error {
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }
	p("## Threshold signing (FROST 2-of-3)\n\n")
	p("Package `threshold`: FROST(Ed25519, SHA-512) of RFC 9591, any two of three parties sign, and the result is an ordinary Ed25519 signature. "+
		"Each party is a mutual-TLS 1.3 server on loopback; the coordinator's connections to them are delayed by `netshape` as a network profile places them. "+
		"The rows are `BenchmarkThreshold/%s/…` of `internal/thresholdbench`; [docs/threshold.md](%s) has the method, the sources of the profiles' round trips, "+
		"a longer run (medians of 3 to 6 runs) and what the figures mean.\n\n", thresholdbench.Row, thresholdDoc)
	if len(r.Threshold) == 0 {
		p("**Not measured** in this report: no threshold row ran (signerbench `-no-threshold`, a `-threshold` that selects none, or `-input` output without `BenchmarkThreshold` rows). "+
			"See [docs/threshold.md](%s) for a run.\n", thresholdDoc)
		return nil
	}
	p("### Our measurements\n\n")
	if r.ThresholdSource != "" {
		p("Ours, %s. ", r.ThresholdSource)
	}
	p("The three parties, the coordinator and the network emulator share one host's CPUs, so the figures at many signs in flight show a saturated machine, not the network. " +
		"p50 and p99 are taken within a run; the p99 of fewer than 100 signs is their slowest. " +
		"None of the figures in these tables is published by others: those are under *Published figures* below.\n\n")
	r.writeThresholdGoal(bw)
	var tables strings.Builder
	if err := thresholdbench.WriteTables(&tables, r.Threshold); err != nil {
		return err
	}
	if tables.Len() > 0 {
		bw.WriteString(tables.String())
		p("\n")
	} else {
		p("The rows of this report (%s) fill none of the tables; they are drawn in the chart below.\n\n", rowNames(r.Threshold))
	}
	if r.hasThresholdChart() {
		p("### Latency against round trip time\n\n")
		p("![FROST 2-of-3 online signing latency against round trip time, with published references](%s)\n\n", ThresholdSVG)
		p("Filled points are ours: p50, with a bar up to p99. The shaded horcrux box and the hollow DKLS23 and CGGMP21 diamonds are published figures, not our measurements; " +
			"the source of the DKLS23 and CGGMP21 medians gives no network delay, so they sit at the left edge.\n\n")
	}
	p("### Published figures, for reference (not our measurements)\n\n")
	p("| scheme | online signing | online bytes | presigning | measured on |\n|---|---|---|---|---|\n")
	for _, ref := range ThresholdReferences {
		p("| %s | %s | %s | %s | %s |\n", mdEscape(ref.Scheme), mdEscape(ref.Online), mdEscape(ref.Bytes), mdEscape(ref.Presigning), mdEscape(ref.MeasuredOn))
	}
	p("\nDKLS23 and CGGMP21 are threshold ECDSA, which has to multiply secret shares (oblivious transfer, Paillier encryption) where threshold Schnorr does not: " +
		"beside FROST they show the shape of the costs, not two implementations of one protocol. Their medians and horcrux's range come from other machines and networks " +
		"and are not comparable point for point with ours.\n")
	return nil
}

// writeThresholdGoal writes the goal of issue 18 at one sign in flight,
// p50 ≤ RTT + 2 ms, against the sign rows that have it, with the signs
// each row's percentiles come from.
func (r *Report) writeThresholdGoal(bw *bufio.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }
	var rows []thresholdbench.Result
	for _, t := range r.Threshold {
		_, rtt := t.Get("rtt-ms")
		_, p50 := t.Get("p50-ms")
		if t.Kind() == "sign" && t.Param("inflight") == "1" && rtt && p50 {
			rows = append(rows, t)
		}
	}
	if len(rows) == 0 {
		return
	}
	p("The goal at one sign in flight, p50 ≤ RTT + 2 ms (see Goals in [docs/threshold.md](%s)), against this report's rows:\n\n", thresholdDoc)
	p("| network | nonces | signs | RTT (ms) | p50 (ms) | RTT + 2 ms | met |\n|---|---|--:|--:|--:|--:|---|\n")
	for _, t := range rows {
		rtt, _ := t.Get("rtt-ms")
		p50, _ := t.Get("p50-ms")
		met := "yes"
		if over := p50 - (rtt + 2); over > 0 {
			met = fmt.Sprintf("no, by %.2f ms", over)
		}
		p("| %s | %s | %s | %.1f | %.2f | %.1f | %s |\n", t.Param("net"), t.Param("store"), signsCell(t), rtt, p50, rtt+2, met)
	}
	p("\n")
}

// signsCell is the signs (iterations) of a row: "300", or "6 × 300" over
// several runs of one size, or the runs' sizes.
func signsCell(t thresholdbench.Result) string {
	n := t.Iterations
	switch {
	case len(n) == 0:
		return "–"
	case len(n) == 1:
		return strconv.Itoa(n[0])
	}
	same := true
	for _, v := range n {
		same = same && v == n[0]
	}
	if same {
		return fmt.Sprintf("%d × %d", len(n), n[0])
	}
	var parts []string
	for _, v := range n {
		parts = append(parts, strconv.Itoa(v))
	}
	return strings.Join(parts, ", ")
}

// rowNames lists the rows' names in code spans.
func rowNames(rs []thresholdbench.Result) string {
	var parts []string
	for _, t := range rs {
		parts = append(parts, "`"+t.Name+"`")
	}
	return strings.Join(parts, ", ")
}

// WriteThresholdSVG writes the chart of the threshold rows, ThresholdSVG.
func (r *Report) WriteThresholdSVG(w io.Writer) error {
	return thresholdbench.WriteLatencySVG(w, r.Threshold)
}
