package report

import (
	"bufio"
	"fmt"
	"math"
	"strings"
)

// Op is what a row of the BLS and Ed25519 comparison times.
type Op int

// The operations of the comparison.
const (
	SignOp Op = iota
	VerifyOp
)

func (o Op) String() string {
	if o == VerifyOp {
		return "verify"
	}
	return "sign"
}

// MiB is the large payload of the comparison, 1 MiB.
const MiB = 1 << 20

// PublishedRow is one line of the SAFE network's comparison of BLS and
// Ed25519: means of 1,000 samples, in µs, as published, with the ratio
// column as printed.
type PublishedRow struct {
	Op          Op
	Payload     int
	BLS, Ed     float64 // µs
	StatedRatio float64 // the published BLS/Ed25519 column
}

// Ratio is BLS/Ed25519 recomputed from the published means.
func (p PublishedRow) Ratio() float64 { return p.BLS / p.Ed }

// Published is the SAFE network's table that the comparison reproduces.
var Published = []PublishedRow{
	{SignOp, 32, 2220.78, 19.36, 114.72},
	{SignOp, MiB, 5822.96, 5826.58, 1.00},
	{VerifyOp, 32, 5983.90, 50.52, 118.45},
	{VerifyOp, MiB, 9478.69, 2624.92, 3.61},
}

// comparedBLS are the BLS implementations of the comparison, each by its
// sign row (a backend of BenchmarkSign) and verification case (of
// BenchmarkVerify): blst first, the one the table is reproduced for.
var comparedBLS = []struct{ label, sign, verify string }{
	{"blst", "bls-minpk", "bls12381-minpk"},
	{"circl", "raw-circl-minpk", "circl-bls12381-minpk"},
}

// The Ed25519 rows of the comparison: crypto/ed25519 called directly.
const (
	edSignRow   = "raw-ed25519"
	edVerifyRow = "ed25519"
)

// Compared reports whether the row of op named name (a backend for
// SignOp, a verification case for VerifyOp) at payload is one the
// comparison reads.
func Compared(op Op, name string, payload int) bool {
	if payload != 32 && payload != MiB {
		return false
	}
	if name == compareName(op, edSignRow, edVerifyRow) {
		return true
	}
	for _, b := range comparedBLS {
		if name == compareName(op, b.sign, b.verify) {
			return true
		}
	}
	return false
}

func compareName(op Op, sign, verify string) string {
	if op == VerifyOp {
		return verify
	}
	return sign
}

// compareRow returns the comparison row of op named name at payload.
func (r *Report) compareRow(op Op, name string, payload int) (Row, bool) {
	rows := r.Rows
	if op == VerifyOp {
		rows = r.Verifies
	}
	for _, row := range rows {
		if row.Backend == name && row.Payload == payload && row.Chunk == 0 && row.E2E.Avg > 0 {
			return row, true
		}
	}
	return Row{}, false
}

// compareMean returns the mean of the comparison row of op named name at
// payload, in µs, and its number of samples (0 for a go test -bench row).
func (r *Report) compareMean(op Op, name string, payload int) (float64, int, bool) {
	row, ok := r.compareRow(op, name, payload)
	return row.E2E.Avg * 1000, row.E2E.N, ok
}

// compareMedian returns the median of the row in µs, or its mean when it
// has no samples (go test -bench): what the per-byte costs are taken
// from, as a busy host moves a median less than a mean.
func (r *Report) compareMedian(op Op, name string, payload int) (float64, bool) {
	row, ok := r.compareRow(op, name, payload)
	if row.HasDist() {
		return row.E2E.P50 * 1000, ok
	}
	return row.E2E.Avg * 1000, ok
}

// usCell prints a mean in µs, or that the row was not measured.
func usCell(v float64, ok bool) string {
	if !ok {
		return "not measured"
	}
	return fmt.Sprintf("%.2f", v)
}

func ratioCell(a float64, aok bool, b float64, bok bool) string {
	if !aok || !bok || b <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f", a/b)
}

// times prints a ratio as "118×" or "3.61×".
func times(v float64) string {
	if v >= 10 {
		return fmt.Sprintf("%.0f×", v)
	}
	return fmt.Sprintf("%.2f×", v)
}

// perByte is what each byte beyond 32 adds, in ns, from means in µs at
// 32 B and at 1 MiB.
func perByte(small, large float64) float64 { return (large - small) * 1000 / (MiB - 32) }

// writeComparison writes the section that reproduces the published BLS
// and Ed25519 table from this report's rows.
func (r *Report) writeComparison(bw *bufio.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }
	p("## BLS against Ed25519, to sign and to verify\n\n")
	p("The SAFE network's comparison of BLS and Ed25519 (µs, mean of 1,000 samples), beside the same figures from this report's rows: "+
		"BLS is blst (`%s` signs, `%s` verifies) with circl (`%s`, `%s`) beside it, both min-pk (public keys in G1, signatures in G2); "+
		"Ed25519 is crypto/ed25519 called directly (`%s`, `%s`). Ratios are recomputed from the means on each side.\n\n",
		comparedBLS[0].sign, comparedBLS[0].verify, comparedBLS[1].sign, comparedBLS[1].verify, edSignRow, edVerifyRow)
	p("| | published BLS | published Ed25519 | published BLS/Ed25519 | blst | circl | Ed25519 | blst/Ed25519 | circl/Ed25519 |\n")
	p("|---|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	minN, maxN := math.MaxInt, 0
	var stated []string
	for _, pub := range Published {
		size := "32 B"
		if pub.Payload == MiB {
			size = "1 MiB"
		}
		ed, edN, edOK := r.compareMean(pub.Op, compareName(pub.Op, edSignRow, edVerifyRow), pub.Payload)
		cells := []string{fmt.Sprintf("%s %s", pub.Op, size), fmt.Sprintf("%.2f", pub.BLS), fmt.Sprintf("%.2f", pub.Ed), fmt.Sprintf("%.2f", pub.Ratio())}
		if got := fmt.Sprintf("%.2f", pub.Ratio()); got != fmt.Sprintf("%.2f", pub.StatedRatio) {
			cells[3] += "¹"
			stated = append(stated, fmt.Sprintf("%s %s: %.2f, printed %.2f", pub.Op, size, pub.Ratio(), pub.StatedRatio))
		}
		var ratios []string
		for _, b := range comparedBLS {
			v, n, ok := r.compareMean(pub.Op, compareName(pub.Op, b.sign, b.verify), pub.Payload)
			cells = append(cells, usCell(v, ok))
			ratios = append(ratios, ratioCell(v, ok, ed, edOK))
			if ok && n > 0 {
				minN, maxN = min(minN, n), max(maxN, n)
			}
		}
		if edOK && edN > 0 {
			minN, maxN = min(minN, edN), max(maxN, edN)
		}
		cells = append(cells, usCell(ed, edOK))
		cells = append(cells, ratios...)
		p("| %s |\n", strings.Join(cells, " | "))
	}
	p("\n")
	if len(stated) > 0 {
		p("¹ Recomputed from the published means; the published ratio column differs (%s).\n", strings.Join(stated, "; "))
	}
	if maxN > 0 {
		if minN == maxN {
			p("Each of this report's figures is a mean of %d samples.\n", minN)
		} else {
			p("Each of this report's figures is a mean of %d to %d samples.\n", minN, maxN)
		}
	} else if r.hasCompared() {
		p("This report's figures are means over each row of `go test -bench`.\n")
	}
	p("\n%s\n", r.comparisonParagraph())
}

// hasSamples reports whether the comparison's Ed25519 rows have per-run
// samples, so that per-byte costs come from medians.
func (r *Report) hasSamples() bool {
	row, ok := r.compareRow(SignOp, edSignRow, 32)
	return ok && row.HasDist()
}

// hasCompared reports whether any row of the comparison was measured.
func (r *Report) hasCompared() bool {
	for _, pub := range Published {
		if _, _, ok := r.compareMean(pub.Op, compareName(pub.Op, edSignRow, edVerifyRow), pub.Payload); ok {
			return true
		}
		for _, b := range comparedBLS {
			if _, _, ok := r.compareMean(pub.Op, compareName(pub.Op, b.sign, b.verify), pub.Payload); ok {
				return true
			}
		}
	}
	return false
}

// comparisonParagraph explains why this report's ratios differ from the
// published ones. Its claims about this machine are computed from the
// rows, so it stays true when the numbers move; those that the rows
// cannot support are left out.
func (r *Report) comparisonParagraph() string {
	type pair struct {
		small, large float64
		okSmall      bool
		okLarge      bool
	}
	get := func(op Op, name string) pair {
		s, _, okS := r.compareMean(op, name, 32)
		l, _, okL := r.compareMean(op, name, MiB)
		return pair{s, l, okS, okL}
	}
	median := func(op Op, name string) pair {
		s, okS := r.compareMedian(op, name, 32)
		l, okL := r.compareMedian(op, name, MiB)
		return pair{s, l, okS, okL}
	}
	pub := func(op Op, payload int) PublishedRow {
		for _, p := range Published {
			if p.Op == op && p.Payload == payload {
				return p
			}
		}
		panic("report: no published row")
	}
	blst, circl := comparedBLS[0], comparedBLS[1]
	edS, edV := get(SignOp, edSignRow), get(VerifyOp, edVerifyRow)
	blS, blV := get(SignOp, blst.sign), get(VerifyOp, blst.verify)
	ciV := get(VerifyOp, circl.verify)
	pubS32, pubSL, pubV32, pubVL := pub(SignOp, 32), pub(SignOp, MiB), pub(VerifyOp, 32), pub(VerifyOp, MiB)

	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("Why the ratios differ. At 32 B each figure is an algorithm's fixed cost. To sign, BLS hashes the message to a point of G2 " +
		"(hash-to-curve: SHA-256 expanded to field elements, two maps to the curve, cofactor clearing) and multiplies it by the key, " +
		"where Ed25519 does one fixed-base scalar multiplication; to verify, BLS checks that two pairings agree (two Miller loops and a final exponentiation), " +
		"where Ed25519 does one double-scalar multiplication. That arithmetic is where a library's generation shows")
	if blS.okSmall && blV.okSmall && edS.okSmall && edV.okSmall {
		rs, rv := blS.small/edS.small, blV.small/edV.small
		w(": here blst costs %s Ed25519's time to sign 32 B and %s to verify, against %s and %s published with an older BLS library",
			times(rs), times(rv), times(pubS32.Ratio()), times(pubV32.Ratio()))
		if ciV.okSmall {
			w(", and circl, another current library, takes %s blst's time to verify 32 B", times(ciV.small/blV.small))
		}
		w(". ")
	} else {
		w("; this report has no BLS rows at 32 B to show it with (blst needs cgo). ")
	}
	w("At 1 MiB the message's hash is most of the cost: Ed25519 runs SHA-512 over the message twice to sign (the deterministic nonce, then the challenge) " +
		"and once to verify, BLS runs SHA-256 over it once, inside hash-to-curve, both to sign and to verify. ")
	w("Published, each byte beyond 32 B added %.2f ns to an Ed25519 sign and %.2f ns to a verify, %.2f and %.2f ns to BLS's; ",
		perByte(pubS32.Ed, pubSL.Ed), perByte(pubV32.Ed, pubVL.Ed), perByte(pubS32.BLS, pubSL.BLS), perByte(pubV32.BLS, pubVL.BLS))
	w("so Ed25519's two passes over 1 MiB (%.0f µs) happened to cost what BLS's fixed %.0f µs and its one pass (%.0f µs) did, and the 1 MiB sign ratio came out at %.2f. ",
		pubSL.Ed-pubS32.Ed, pubS32.BLS, pubSL.BLS-pubS32.BLS, pubSL.Ratio())
	// Per-byte costs from medians where the rows have samples: a mean of
	// 1 MiB rows on a busy host can come out below the 32-byte one.
	edS, edV, blS, blV = median(SignOp, edSignRow), median(VerifyOp, edVerifyRow), median(SignOp, blst.sign), median(VerifyOp, blst.verify)
	if edS.okSmall && edS.okLarge && edV.okSmall && edV.okLarge {
		es, ev := perByte(edS.small, edS.large), perByte(edV.small, edV.large)
		w("Here a byte adds %.2f ns to an Ed25519 sign and %.2f ns to a verify", es, ev)
		if blS.okSmall && blS.okLarge && blV.okSmall && blV.okLarge {
			bs, bv := perByte(blS.small, blS.large), perByte(blV.small, blV.large)
			w(", and %.2f and %.2f ns to blst's", bs, bv)
			if bv > 0 && ev > 0 {
				w(": a byte of SHA-256 inside BLS verification costs %s a byte of SHA-512 inside Ed25519's, against %s published",
					times(bv/ev), times(perByte(pubV32.BLS, pubVL.BLS)/perByte(pubV32.Ed, pubVL.Ed)))
			}
			if es > bs && blS.small > edS.small {
				cross := 32 + (blS.small-edS.small)*1000/(es-bs)
				w(", so BLS signs faster than Ed25519 once a message passes about %s", sizeName(cross))
			}
		}
		if r.hasSamples() {
			w(" (medians, which other work on the host moves less than means)")
		}
		w(". ")
	}
	w("How the two hashes compare is the hardware's doing: many current x86 and ARM processors have instructions for SHA-256 but not for SHA-512, " +
		"and the published figures came from another machine")
	if r.Host != "" {
		w(" than this report's (%s)", r.Host)
	}
	w(".")
	return b.String()
}

// sizeName prints a byte count as B, KiB or MiB, whole when it is.
func sizeName(bytes float64) string {
	unit := func(v float64, name string) string {
		if v == math.Trunc(v) {
			return fmt.Sprintf("%.0f %s", v, name)
		}
		return fmt.Sprintf("%.1f %s", v, name)
	}
	switch {
	case bytes >= MiB:
		return unit(bytes/MiB, "MiB")
	case bytes >= 1024:
		return unit(math.Round(bytes/1024), "KiB")
	}
	return fmt.Sprintf("%.0f B", bytes)
}
