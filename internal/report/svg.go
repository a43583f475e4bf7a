package report

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
)

// palette is used in order for series; stages have fixed colours.
var palette = []string{
	"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
	"#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd",
}

var stageColours = map[string]string{
	"kdf": "#9467bd", "session": "#8c564b", "transport": "#1f77b4", "stall": "#d62728",
	"wire": "#ff7f0e", "confirm": "#e377c2", "device": "#2ca02c", "sign": "#17becf", "other": "#c7c7c7",
}

// stageOrder is the order segments stack in, as a sign happens.
var stageOrder = []string{"kdf", "session", "stall", "transport", "wire", "confirm", "device", "sign", "other"}

func esc(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

// WritePayloadSVG draws end-to-end latency (p50, or the mean for bench
// rows) against payload size, one line per signer path, both axes
// logarithmic. Each series is a <g class="series" data-series="path">.
func (r *Report) WritePayloadSVG(w io.Writer) error {
	const (
		left, right, top, bottom = 70.0, 330.0, 40.0, 50.0
		width, height            = 1000.0, 560.0
	)
	pw, ph := width-left-right, height-top-bottom
	bw := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }

	minX, maxX := math.Inf(1), math.Inf(-1)
	minY, maxY := math.Inf(1), math.Inf(-1)
	val := func(row Row) float64 {
		if row.HasDist() {
			return row.E2E.P50
		}
		return row.E2E.Avg
	}
	for _, row := range r.Rows {
		if row.Payload <= 0 || val(row) <= 0 {
			continue
		}
		minX, maxX = math.Min(minX, float64(row.Payload)), math.Max(maxX, float64(row.Payload))
		minY, maxY = math.Min(minY, val(row)), math.Max(maxY, val(row))
	}
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	p(`<title>End-to-end latency per sign against payload size</title>` + "\n")
	p(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	p(`<text x="%.0f" y="22" font-size="15" font-weight="bold">End-to-end latency per sign (p50, ms, log scale) against payload (bytes, log scale)</text>`+"\n", left)
	if math.IsInf(minX, 1) {
		p(`<text x="%.0f" y="%.0f">no rows</text>`+"\n</svg>\n", left, top+20)
		return bw.Flush()
	}
	if minX == maxX {
		minX, maxX = minX/2, maxX*2
	}
	lx0, lx1 := math.Log2(minX), math.Log2(maxX)
	ly0, ly1 := math.Floor(math.Log10(minY)), math.Ceil(math.Log10(maxY))
	if ly0 == ly1 {
		ly1++
	}
	x := func(v float64) float64 { return left + (math.Log2(v)-lx0)/(lx1-lx0)*pw }
	y := func(v float64) float64 { return top + ph - (math.Log10(v)-ly0)/(ly1-ly0)*ph }

	// Axes and grid.
	p(`<g class="axes" stroke="#999" fill="none">`)
	p(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f"/>`, left, top, pw, ph)
	p("</g>\n")
	for e := ly0; e <= ly1; e++ {
		v := math.Pow(10, e)
		p(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#eee"/>`, left, left+pw, y(v), y(v))
		p(`<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", left-6, y(v)+4, esc(fmtMs(v)))
	}
	lastLabel := math.Inf(-1)
	for _, pl := range r.payloads() {
		v := float64(pl)
		p(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#eee"/>`, x(v), x(v), top, top+ph)
		if x(v)-lastLabel >= 30 { // sizes close together (108, 117, 128) share a label
			p(`<text x="%.1f" y="%.1f" text-anchor="middle">%d</text>`, x(v), top+ph+16, pl)
			lastLabel = x(v)
		}
		p("\n")
	}
	p(`<text x="%.1f" y="%.1f" text-anchor="middle">payload (bytes)</text>`+"\n", left+pw/2, height-12)
	p(`<text transform="translate(16 %.1f) rotate(-90)" text-anchor="middle">ms per sign</text>`+"\n", top+ph/2)
	if t := float64(r.timeout().Milliseconds()); t >= math.Pow(10, ly0) && t <= math.Pow(10, ly1) {
		p(`<line class="timeout" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#d62728" stroke-dasharray="6 4"/>`, left, left+pw, y(t), y(t))
		p(`<text x="%.1f" y="%.1f" fill="#d62728" text-anchor="end">%s consensus timeout</text>`+"\n", left+pw-4, y(t)-4, r.timeout())
	}

	dashes := []string{"", "6 3", "2 2", "8 3 2 3"} // a new dash pattern each time the palette wraps
	for i, path := range r.Paths() {
		col := palette[i%len(palette)]
		dash := dashes[(i/len(palette))%len(dashes)]
		dashAttr := ""
		if dash != "" {
			dashAttr = fmt.Sprintf(` stroke-dasharray="%s"`, dash)
		}
		var pts []string
		var rows []Row
		for _, row := range r.Rows {
			if row.Path() == path && row.Payload > 0 && val(row) > 0 {
				rows = append(rows, row)
			}
		}
		sort.Slice(rows, func(a, b int) bool { return rows[a].Payload < rows[b].Payload })
		for _, row := range rows {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(float64(row.Payload)), y(val(row))))
		}
		p(`<g class="series" data-series="%s" stroke="%s" fill="%s">`, esc(path), col, col)
		if len(pts) > 1 {
			p(`<polyline fill="none" stroke-width="1.5"%s points="%s"/>`, dashAttr, strings.Join(pts, " "))
		}
		for _, row := range rows {
			p(`<circle cx="%.1f" cy="%.1f" r="2.5"><title>%s, %d B: %s ms (%s)</title></circle>`,
				x(float64(row.Payload)), y(val(row)), esc(path), row.Payload, fmtMs(val(row)), esc(basis(row)))
		}
		ly := top + 4 + float64(i)*15
		p(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke-width="2.5"%s/><text x="%.1f" y="%.1f" stroke="none" fill="black">%s</text>`,
			left+pw+8, left+pw+30, ly+5, ly+5, dashAttr, left+pw+34, ly+9, esc(path))
		p("</g>\n")
	}
	p("</svg>\n")
	return bw.Flush()
}

// WriteStagesSVG draws, for each signer path at its vote-sized payload, a
// horizontal bar of its stages stacked in the order they happen, with the
// consensus timeout as a vertical line. Each stage is a <g class="series"
// data-series="stage">; modeled segments are hatched.
func (r *Report) WriteStagesSVG(w io.Writer) error {
	refs := r.Reference()
	const left, right, top, barH, gap = 250.0, 40.0, 60.0, 16.0, 6.0
	width := 1000.0
	height := top + float64(len(refs))*(barH+gap) + 70
	pw := width - left - right
	bw := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }

	timeoutMs := float64(r.timeout().Milliseconds())
	maxMs := timeoutMs
	for _, row := range refs {
		maxMs = math.Max(maxMs, math.Max(row.E2E.Avg, row.StagesMs()))
	}
	maxMs *= 1.05
	x := func(v float64) float64 { return left + v/maxMs*pw }

	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	p(`<title>Stages of one vote-sized sign per signer path</title>` + "\n")
	p(`<defs><pattern id="modeled" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="3" height="6" fill="white" fill-opacity="0.45"/></pattern></defs>` + "\n")
	p(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	p(`<text x="%.0f" y="22" font-size="15" font-weight="bold">Where the milliseconds of one sign go (mean ms per sign; hatched = modeled)</text>`+"\n", 10.0)

	// Legend.
	lx := 10.0
	for _, name := range stageOrder {
		p(`<rect x="%.1f" y="32" width="10" height="10" fill="%s"/><text x="%.1f" y="41">%s</text>`, lx, stageColours[name], lx+14, name)
		lx += 14 + 8*float64(len(name)) + 14
	}
	p("\n")

	// Bars, collected per stage so each stage is one series.
	type seg struct {
		x0, x1, y float64
		row       Row
		st        Stage
	}
	segs := map[string][]seg{}
	for i, row := range refs {
		yy := top + float64(i)*(barH+gap)
		p(`<text x="%.1f" y="%.1f" text-anchor="end">%s, %d B</text>`+"\n", left-6, yy+barH-4, esc(row.Path()), row.Payload)
		byName := map[string]Stage{}
		for _, st := range row.Stages {
			byName[st.Name] = st
		}
		if other := row.E2E.Avg - row.StagesMs(); other > 0 {
			byName["other"] = Stage{Name: "other", Ms: other}
		}
		cur := 0.0
		for _, name := range stageOrder {
			st, ok := byName[name]
			if !ok || st.Ms <= 0 {
				continue
			}
			segs[name] = append(segs[name], seg{x(cur), x(cur + st.Ms), yy, row, st})
			cur += st.Ms
		}
		p(`<text x="%.1f" y="%.1f" font-size="11">%s ms</text>`+"\n", x(cur)+4, yy+barH-4, esc(fmtMs(row.E2E.Avg)))
	}
	for _, name := range stageOrder {
		list := segs[name]
		if len(list) == 0 {
			continue
		}
		p(`<g class="series" data-series="%s" fill="%s">`, name, stageColours[name])
		for _, s := range list {
			wdt := math.Max(s.x1-s.x0, 0.5)
			src := "measured"
			if s.st.Modeled() {
				src = "modeled"
				if s.st.Profile != "" {
					src += ": " + s.st.Profile
				}
			}
			p(`<rect x="%.2f" y="%.1f" width="%.2f" height="%.0f"><title>%s %s: %s ms (%s)</title></rect>`,
				s.x0, s.y, wdt, barH, esc(s.row.Path()), name, fmtMs(s.st.Ms), esc(src))
			if s.st.Modeled() {
				p(`<rect x="%.2f" y="%.1f" width="%.2f" height="%.0f" fill="url(#modeled)"/>`, s.x0, s.y, wdt, barH)
			}
		}
		p("</g>\n")
	}
	bottom := top + float64(len(refs))*(barH+gap)
	p(`<line class="timeout" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#d62728" stroke-width="2" stroke-dasharray="6 4"/>`, x(timeoutMs), x(timeoutMs), top-8, bottom)
	p(`<text x="%.1f" y="%.1f" fill="#d62728" text-anchor="end">%s consensus timeout</text>`+"\n", x(timeoutMs)-4, top-12, r.timeout())
	for _, t := range ticks(maxMs) {
		p(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#999"/><text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`,
			x(t), x(t), bottom, bottom+4, x(t), bottom+32, fmtMs(t))
	}
	p(`<text x="%.1f" y="%.1f" text-anchor="middle">ms per sign</text>`+"\n", left+pw/2, bottom+50)
	p("</svg>\n")
	return bw.Flush()
}

// ticks returns round tick values from 0 to about top.
func ticks(top float64) []float64 {
	if top <= 0 {
		return nil
	}
	step := math.Pow(10, math.Floor(math.Log10(top)))
	for top/step < 4 {
		step /= 2
	}
	var out []float64
	for v := 0.0; v <= top; v += step {
		out = append(out, v)
	}
	return out
}

func (r *Report) payloads() []int {
	seen := map[int]bool{}
	var out []int
	for _, row := range r.Rows {
		if row.Payload > 0 && !seen[row.Payload] {
			seen[row.Payload] = true
			out = append(out, row.Payload)
		}
	}
	sort.Ints(out)
	return out
}
