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

// stageColours are the fixed colours of the stages.
var stageColours = map[string]string{
	"kdf": "#9467bd", "session": "#8c564b", "transport": "#1f77b4", "stall": "#d62728",
	"wire": "#ff7f0e", "confirm": "#e377c2", "device": "#2ca02c", "sign": "#17becf", "state": "#bcbd22",
	"other": "#c7c7c7",
}

// stageOrder is the order segments stack in, as a sign happens.
var stageOrder = []string{"kdf", "session", "stall", "transport", "wire", "confirm", "device", "sign", "state", "other"}

func esc(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

// seriesPalette is the qualitative palette series take their colours
// from, one per backend within a panel; the chunk sizes of one backend get
// darker and lighter shades of its colour.
var seriesPalette = []string{
	"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f",
}

// Family returns the backend family of a backend name: its first
// dash-separated word ("ledger" for "ledger-hid-raw").
func Family(backend string) string {
	f, _, _ := strings.Cut(backend, "-")
	return f
}

// VerifyFamily is the panel of the payload chart that holds the
// verification rows, each series named "verify <case>".
const VerifyFamily = "verify"

// Families returns the backend families of the rows in order of first
// appearance, then VerifyFamily when the report has verification rows:
// the panels of the payload chart.
func (r *Report) Families() []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range r.chartSeries() {
		if !seen[s.family] {
			seen[s.family] = true
			out = append(out, s.family)
		}
	}
	return out
}

// chartPoint is one row of the payload chart: its panel, its series, and
// the backend whose colour the series takes.
type chartPoint struct {
	family, path, backend string
	row                   Row
}

// chartSeries returns the rows of the payload chart: the sign rows by
// backend family, then the verification rows in one panel.
func (r *Report) chartSeries() []chartPoint {
	var out []chartPoint
	for _, row := range r.Rows {
		out = append(out, chartPoint{Family(row.Backend), row.Path(), row.Backend, row})
	}
	for _, row := range r.Verifies {
		out = append(out, chartPoint{VerifyFamily, VerifyFamily + " " + row.Backend, VerifyFamily + " " + row.Backend, row})
	}
	return out
}

// shade mixes the colour hex ("#rrggbb") with black (t < 0) or white
// (t > 0) by |t|.
func shade(hex string, t float64) string {
	var rgb [3]float64
	for i := range rgb {
		var v int
		fmt.Sscanf(hex[1+2*i:3+2*i], "%02x", &v)
		c := float64(v)
		if t < 0 {
			c *= 1 + t
		} else {
			c += (255 - c) * t
		}
		rgb[i] = math.Round(c)
	}
	return fmt.Sprintf("#%02x%02x%02x", int(rgb[0]), int(rgb[1]), int(rgb[2]))
}

// hsl returns the colour of hue h (degrees) at saturation s and lightness
// l (0…1) as "#rrggbb".
func hsl(h, s, l float64) string {
	c := (1 - math.Abs(2*l-1)) * s
	hp := math.Mod(h, 360) / 60
	x := c * (1 - math.Abs(math.Mod(hp, 2)-1))
	var r, g, b float64
	switch {
	case hp < 1:
		r, g = c, x
	case hp < 2:
		r, g = x, c
	case hp < 3:
		g, b = c, x
	case hp < 4:
		g, b = x, c
	case hp < 5:
		r, b = x, c
	default:
		r, b = c, x
	}
	m := l - c/2
	to := func(v float64) int { return int(math.Round(255 * (v + m))) }
	return fmt.Sprintf("#%02x%02x%02x", to(r), to(g), to(b))
}

// seriesColours gives each path of one panel its own colour: one hue per
// backend, and shades of it for the backend's chunk sizes. No two paths
// get the same colour.
func seriesColours(paths []string, backendOf map[string]string) map[string]string {
	var backends []string
	members := map[string][]string{}
	for _, p := range paths {
		b := backendOf[p]
		if _, ok := members[b]; !ok {
			backends = append(backends, b)
		}
		members[b] = append(members[b], p)
	}
	out := map[string]string{}
	used := map[string]bool{}
	for i, b := range backends {
		base := ""
		if len(backends) <= len(seriesPalette) {
			base = seriesPalette[i]
		} else {
			base = hsl(float64(i)*360/float64(len(backends)), 0.7, 0.45)
		}
		ms := members[b]
		for j, p := range ms {
			c := base
			if len(ms) > 1 {
				// From dark (-0.5) to light (+0.35) across the chunk sizes:
				// the lightest still reads on white.
				c = shade(base, -0.5+0.85*float64(j)/float64(len(ms)-1))
			}
			for k := 1; used[c]; k++ { // only when shades of different hues meet
				c = hsl(float64(k)*137.5, 0.6, 0.35+0.2*float64(k%3)/2)
			}
			used[c] = true
			out[p] = c
		}
	}
	return out
}

// The payload chart's layout, in pixels: panels in two columns, each a
// plot with its label column to the right.
const (
	payloadCols                       = 2
	payloadPanelW                     = 620.0
	payloadLeft, payloadPlotW         = 62.0, 330.0 // the label column follows the plot
	payloadTitleH, payloadAxisH       = 46.0, 44.0
	payloadGapH                       = 26.0
	payloadLabelStep, payloadMinPlotH = 12.0, 200.0
	payloadPanelTop                   = 22.0 // panel title above its plot
)

// payloadValue is the latency the payload chart draws for a row: p50, or
// the mean for bench rows.
func payloadValue(row Row) float64 {
	if row.HasDist() {
		return row.E2E.P50
	}
	return row.E2E.Avg
}

// WritePayloadSVG draws end-to-end latency (p50, or the mean for bench
// rows) against payload size, both axes logarithmic and shared, in one
// panel per backend family (<g class="panel" data-family="ledger">) and
// one for the verification rows (data-family="verify"). In a panel each
// signer path is a <g class="series" data-series="path"> with a colour
// of its own, labelled at the end of its line.
func (r *Report) WritePayloadSVG(w io.Writer) error {
	bw := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }

	points := r.chartSeries()
	panels, backendOf := payloadPanels(points)
	width, height := layoutPayloadPanels(panels)

	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	p(`<title>End-to-end latency per sign against payload size, one panel per backend family, and per verification</title>` + "\n")
	p(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	p(`<text x="10" y="22" font-size="15" font-weight="bold">End-to-end latency per sign (p50, ms) against payload (bytes), one panel per backend family; verification in the panel named verify</text>` + "\n")
	p(`<text x="10" y="38" fill="#555">Both axes logarithmic and the same in every panel; a line is labelled at its end; shades of one colour are one backend's chunk sizes.</text>` + "\n")
	ax, ok := newPayloadAxes(points)
	if !ok {
		p(`<text x="10" y="70">no rows</text>` + "\n</svg>\n")
		return bw.Flush()
	}
	for _, pn := range panels {
		pp := panelPlot{payloadPanel: pn, ax: ax, left: pn.x0 + payloadLeft, top: pn.y0 + payloadPanelTop}
		p(`<g class="panel" data-family="%s">`+"\n", esc(pn.family))
		r.writePanelAxes(p, pp)
		colours := seriesColours(pn.paths, backendOf)
		labels := writePanelSeries(p, pp, points, colours)
		writePanelLabels(p, pp, labels, colours)
		p("</g>\n")
	}
	p("</svg>\n")
	return bw.Flush()
}

// payloadPanel is one panel of the payload chart: a family, its paths in
// order of appearance, and where it sits.
type payloadPanel struct {
	family string
	paths  []string
	x0, y0 float64 // top left of the panel
	plotH  float64
}

// payloadPanels returns the panels of the chart, the families in order of
// appearance, and the backend of each path (whose colour it takes).
func payloadPanels(points []chartPoint) ([]*payloadPanel, map[string]string) {
	backendOf := map[string]string{}
	var panels []*payloadPanel
	byFamily := map[string]*payloadPanel{}
	for _, pt := range points {
		pn := byFamily[pt.family]
		if pn == nil {
			pn = &payloadPanel{family: pt.family}
			byFamily[pt.family] = pn
			panels = append(panels, pn)
		}
		if _, ok := backendOf[pt.path]; !ok {
			backendOf[pt.path] = pt.backend
			pn.paths = append(pn.paths, pt.path)
		}
	}
	return panels, backendOf
}

// layoutPayloadPanels places the panels in rows of payloadCols, each row
// as tall as its panel with the most labels needs, and returns the size
// of the chart.
func layoutPayloadPanels(panels []*payloadPanel) (width, height float64) {
	height = payloadTitleH
	for i := 0; i < len(panels); i += payloadCols {
		rowH := payloadMinPlotH
		for j := i; j < min(i+payloadCols, len(panels)); j++ {
			rowH = math.Max(rowH, float64(len(panels[j].paths))*payloadLabelStep+8)
		}
		for j := i; j < min(i+payloadCols, len(panels)); j++ {
			panels[j].x0 = float64(j-i) * payloadPanelW
			panels[j].y0 = height
			panels[j].plotH = rowH
		}
		height += payloadPanelTop + rowH + payloadAxisH + payloadGapH
	}
	width = payloadPanelW*payloadCols + 30 // room for the longest labels of the right column
	if len(panels) == 0 {
		height = 120
	}
	return width, height
}

// payloadAxes are the axes every panel shares: log2 of the payload from
// lx0 to lx1, and whole decades of milliseconds from 10^ly0 to 10^ly1.
type payloadAxes struct{ lx0, lx1, ly0, ly1 float64 }

// newPayloadAxes returns the axes that hold every point with a payload
// and a latency, or false when there is none.
func newPayloadAxes(points []chartPoint) (payloadAxes, bool) {
	minX, maxX := math.Inf(1), math.Inf(-1)
	minY, maxY := math.Inf(1), math.Inf(-1)
	for _, pt := range points {
		row := pt.row
		if row.Payload <= 0 || payloadValue(row) <= 0 {
			continue
		}
		minX, maxX = math.Min(minX, float64(row.Payload)), math.Max(maxX, float64(row.Payload))
		minY, maxY = math.Min(minY, payloadValue(row)), math.Max(maxY, payloadValue(row))
	}
	if math.IsInf(minX, 1) {
		return payloadAxes{}, false
	}
	if minX == maxX {
		minX, maxX = minX/2, maxX*2
	}
	ax := payloadAxes{
		lx0: math.Log2(minX), lx1: math.Log2(maxX),
		ly0: math.Floor(math.Log10(minY)), ly1: math.Ceil(math.Log10(maxY)),
	}
	if ax.ly0 == ax.ly1 {
		ax.ly1++
	}
	return ax, true
}

// panelPlot is a panel's plot area: its top left corner, and the shared
// axes that place a point in it.
type panelPlot struct {
	*payloadPanel
	ax        payloadAxes
	left, top float64
}

// x returns the x of payload v.
func (pp panelPlot) x(v float64) float64 {
	return pp.left + (math.Log2(v)-pp.ax.lx0)/(pp.ax.lx1-pp.ax.lx0)*payloadPlotW
}

// y returns the y of latency v (ms).
func (pp panelPlot) y(v float64) float64 {
	return pp.top + pp.plotH - (math.Log10(v)-pp.ax.ly0)/(pp.ax.ly1-pp.ax.ly0)*pp.plotH
}

// writePanelAxes draws a panel's title, frame, grid, axis labels and,
// when it falls within the axis, the consensus timeout.
func (r *Report) writePanelAxes(p func(string, ...any), pp panelPlot) {
	pl, top, ph := pp.left, pp.top, pp.plotH
	p(`<text x="%.1f" y="%.1f" font-size="13" font-weight="bold">%s</text>`+"\n", pl, top-7, esc(pp.family))
	p(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" stroke="#999" fill="none"/>`+"\n", pl, top, payloadPlotW, ph)
	for e := pp.ax.ly0; e <= pp.ax.ly1; e++ {
		v := math.Pow(10, e)
		p(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#eee"/>`, pl, pl+payloadPlotW, pp.y(v), pp.y(v))
		p(`<text x="%.1f" y="%.1f" text-anchor="end" font-size="11">%s</text>`+"\n", pl-5, pp.y(v)+4, esc(fmtMs(v)))
	}
	lastLabel := math.Inf(-1)
	for _, pay := range r.payloads() {
		v := float64(pay)
		p(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#eee"/>`, pp.x(v), pp.x(v), top, top+ph)
		if pp.x(v)-lastLabel >= 28 { // sizes close together (108, 117, 128) share a label
			p(`<text x="%.1f" y="%.1f" text-anchor="middle" font-size="11">%s</text>`, pp.x(v), top+ph+14, axisSize(pay))
			lastLabel = pp.x(v)
		}
		p("\n")
	}
	p(`<text x="%.1f" y="%.1f" text-anchor="middle" font-size="11">payload (bytes)</text>`+"\n", pl+payloadPlotW/2, top+ph+30)
	unit := "ms per sign"
	if pp.family == VerifyFamily {
		unit = "ms per verification"
	}
	p(`<text transform="translate(%.1f %.1f) rotate(-90)" text-anchor="middle" font-size="11">%s</text>`+"\n", pp.x0+14, top+ph/2, unit)
	timeoutMs := float64(r.timeout().Milliseconds())
	if timeoutMs >= math.Pow(10, pp.ax.ly0) && timeoutMs <= math.Pow(10, pp.ax.ly1) {
		p(`<line class="timeout" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#d62728" stroke-dasharray="6 4"/>`, pl, pl+payloadPlotW, pp.y(timeoutMs), pp.y(timeoutMs))
		p(`<text x="%.1f" y="%.1f" fill="#d62728" text-anchor="end" font-size="11">%s timeout</text>`+"\n", pl+payloadPlotW-4, pp.y(timeoutMs)-4, r.timeout())
	}
}

// seriesLabel is where a series' line ends and, once spread, where its
// label sits.
type seriesLabel struct {
	path       string
	endX, endY float64
	y          float64
}

// writePanelSeries draws a panel's series, one line and its points per
// path, and returns their labels at the lines' ends.
func writePanelSeries(p func(string, ...any), pp panelPlot, points []chartPoint, colours map[string]string) []seriesLabel {
	var labels []seriesLabel
	for _, path := range pp.paths {
		var rows []Row
		for _, pt := range points {
			if pt.path == path && pt.row.Payload > 0 && payloadValue(pt.row) > 0 {
				rows = append(rows, pt.row)
			}
		}
		sort.Slice(rows, func(a, b int) bool { return rows[a].Payload < rows[b].Payload })
		col := colours[path]
		p(`<g class="series" data-series="%s" stroke="%s" fill="%s">`, esc(path), col, col)
		var pts []string
		for _, row := range rows {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", pp.x(float64(row.Payload)), pp.y(payloadValue(row))))
		}
		if len(pts) > 1 {
			p(`<polyline fill="none" stroke-width="1.8" points="%s"/>`, strings.Join(pts, " "))
		}
		for _, row := range rows {
			p(`<circle cx="%.1f" cy="%.1f" r="2.5"><title>%s, %d B: %s ms (%s)</title></circle>`,
				pp.x(float64(row.Payload)), pp.y(payloadValue(row)), esc(path), row.Payload, fmtMs(payloadValue(row)), esc(basis(row)))
		}
		p("</g>\n")
		if len(rows) > 0 {
			last := rows[len(rows)-1]
			ex, ey := pp.x(float64(last.Payload)), pp.y(payloadValue(last))
			labels = append(labels, seriesLabel{path: path, endX: ex, endY: ey, y: ey})
		}
	}
	return labels
}

// writePanelLabels spreads the labels down the label column so they do
// not overlap, and draws each joined to its line's end by a dotted leader
// (solid lines are data; a leader only points).
func writePanelLabels(p func(string, ...any), pp panelPlot, labels []seriesLabel, colours map[string]string) {
	sort.SliceStable(labels, func(a, b int) bool { return labels[a].endY < labels[b].endY })
	for i := range labels { // push down
		if i > 0 && labels[i].y < labels[i-1].y+payloadLabelStep {
			labels[i].y = labels[i-1].y + payloadLabelStep
		}
	}
	if n := len(labels); n > 0 && labels[n-1].y > pp.top+pp.plotH { // then up, to stay beside the plot
		labels[n-1].y = pp.top + pp.plotH
		for i := n - 2; i >= 0; i-- {
			labels[i].y = math.Min(labels[i].y, labels[i+1].y-payloadLabelStep)
		}
	}
	lx := pp.left + payloadPlotW + 14
	for _, lb := range labels {
		col := colours[lb.path]
		// The verify panel's title says what its series are; their
		// labels name the case alone (aggregate cases are long).
		text := strings.TrimPrefix(lb.path, VerifyFamily+" ")
		p(`<g class="label" data-series="%s"><line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="0.7" stroke-dasharray="1 3" stroke-opacity="0.7"/><text x="%.1f" y="%.1f" fill="%s" font-size="11">%s</text></g>`+"\n",
			esc(lb.path), lb.endX+3, lb.endY, lx-2, lb.y, col, lx, lb.y+4, col, esc(text))
	}
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
	for _, pt := range r.chartSeries() {
		if pl := pt.row.Payload; pl > 0 && !seen[pl] {
			seen[pl] = true
			out = append(out, pl)
		}
	}
	sort.Ints(out)
	return out
}

// axisSize labels a payload on the chart's axis: bytes up to 64 KiB, then
// "1 MiB" rather than seven digits.
func axisSize(n int) string {
	switch {
	case n >= MiB && n%MiB == 0:
		return fmt.Sprintf("%d MiB", n/MiB)
	case n >= 64<<10 && n%1024 == 0:
		return fmt.Sprintf("%d KiB", n/1024)
	}
	return fmt.Sprint(n)
}
