package thresholdbench

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Reference is a published figure drawn beside the measurements, never
// one of ours.
type Reference struct {
	Label          string
	RTTMin, RTTMax float64 // ms; equal for a point
	LatMin, LatMax float64 // ms; equal for a point
	Colour         string
}

// References are the published figures the chart shows: horcrux's users'
// reports, and the DKLS23 and CGGMP21 online signing medians of the
// published 2-of-3 comparison (measured on n2d-standard-16 machines), whose
// source does not give the network delay of those medians; they are drawn
// at the round-trip axis's left edge.
var References = []Reference{
	{Label: "horcrux, users' reports (horcrux #214)", RTTMin: 100, RTTMax: 200, LatMin: 300, LatMax: 800, Colour: "#d62728"},
	{Label: "DKLS23 online p50, published", RTTMin: 0, RTTMax: 0, LatMin: 7.5, LatMax: 7.5, Colour: "#9467bd"},
	{Label: "CGGMP21 online p50, published", RTTMin: 0, RTTMax: 0, LatMin: 26, LatMax: 26, Colour: "#8c564b"},
}

func xmlEsc(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

// latencySerie is a series of the chart.
type latencySerie struct {
	label, kind, store, inflight, colour string
}

// matches reports whether r is a point of s.
func (s latencySerie) matches(r Result) bool {
	return r.Kind() == s.kind && r.Param("store") == s.store && r.Param("inflight") == s.inflight
}

// latencySeries are the series of the chart: sign rows chosen by store and
// in flight.
var latencySeries = []latencySerie{
	{"plain TCP echo on the same shaped link", "echo", "", "", "#7f7f7f"},
	{"FROST 2-of-3, 1 in flight", "sign", "mem", "1", "#1f77b4"},
	{"FROST 2-of-3, 200 in flight", "sign", "mem", "200", "#ff7f0e"},
	{"FROST 2-of-3, 1 in flight, nonces synced to a file", "sign", "dir", "1", "#2ca02c"},
}

// Charted reports whether WriteLatencySVG draws a point of results: a
// sign row of one of its series or an echo row, with a round trip and a
// p50. Without one the chart has only the references.
func Charted(results []Result) bool {
	for _, r := range results {
		_, rtt := r.Get("rtt-ms")
		_, p50 := r.Get("p50-ms")
		if rtt && p50 && slices.ContainsFunc(latencySeries, func(s latencySerie) bool { return s.matches(r) }) {
			return true
		}
	}
	return false
}

// The latency chart's layout, in pixels, and its axes' ranges, in ms.
const (
	latencyW, latencyH         = 980.0, 500.0
	latencyLeft, latencyTop    = 70.0, 70.0
	latencyPlotW, latencyPlotH = 540.0, 360.0
	latencyXMin, latencyXMax   = 0.3, 300.0
	latencyYMin, latencyYMax   = 0.5, 1000.0
)

// latencyX returns the x of a round trip of ms, clamped to the axis.
func latencyX(ms float64) float64 {
	ms = math.Min(math.Max(ms, latencyXMin), latencyXMax)
	return latencyLeft + (math.Log10(ms)-math.Log10(latencyXMin))/(math.Log10(latencyXMax)-math.Log10(latencyXMin))*latencyPlotW
}

// latencyY returns the y of a latency of ms, clamped to the axis.
func latencyY(ms float64) float64 {
	ms = math.Min(math.Max(ms, latencyYMin), latencyYMax)
	return latencyTop + latencyPlotH - (math.Log10(ms)-math.Log10(latencyYMin))/(math.Log10(latencyYMax)-math.Log10(latencyYMin))*latencyPlotH
}

// WriteLatencySVG draws online signing latency against the round trip to
// the parties a sign waits for: each series' p50 as a point with a bar up
// to its p99, the line of one round trip and the goal of one round trip
// plus 2 ms, and the References, shaded as published rather than measured.
// Both axes are logarithmic.
func WriteLatencySVG(w io.Writer, results []Result) error {
	bw := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`+"\n", latencyW, latencyH, latencyW, latencyH)
	p(`<title>FROST 2-of-3 online signing latency against round trip time, with published references</title>` + "\n")
	p(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	p(`<text x="10" y="22" font-size="15" font-weight="bold">Online signing latency (ms) against the round trip to the second-nearest party (ms)</text>` + "\n")
	p(`<text x="10" y="40" fill="#555">Ours: p50 as a point, a bar up to p99, one point per network profile. Shaded and hollow: published figures, not our measurements.</text>` + "\n")
	p(`<text x="10" y="56" fill="#555">Both axes logarithmic. Ours measured on one host, the network emulated (netshape); references on their authors' machines.</text>` + "\n")
	writeLatencyAxes(p)
	writeReferences(p)
	for _, s := range latencySeries {
		writeLatencySerie(p, s, results)
	}
	writeLatencyLegend(p, results)
	p("</svg>\n")
	return bw.Flush()
}

// writeLatencyAxes draws the frame, the grid and the axes' labels, the
// line of one round trip and the goal of one round trip plus 2 ms.
func writeLatencyAxes(p func(string, ...any)) {
	const left, top, plotW, plotH = latencyLeft, latencyTop, latencyPlotW, latencyPlotH
	x, y := latencyX, latencyY
	p(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" stroke="#999" fill="none"/>`+"\n", left, top, plotW, plotH)
	for _, v := range []float64{0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000} {
		p(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#eee"/>`, left, left+plotW, y(v), y(v))
		p(`<text x="%.1f" y="%.1f" text-anchor="end" font-size="11">%s</text>`+"\n", left-5, y(v)+4, strconv.FormatFloat(v, 'f', -1, 64))
	}
	for _, v := range []float64{0.5, 1, 2, 5, 10, 20, 50, 100, 200} {
		p(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#eee"/>`, x(v), x(v), top, top+plotH)
		p(`<text x="%.1f" y="%.1f" text-anchor="middle" font-size="11">%s</text>`+"\n", x(v), top+plotH+14, strconv.FormatFloat(v, 'f', -1, 64))
	}
	p(`<text x="%.1f" y="%.1f" text-anchor="middle" font-size="11">round trip time to the second-nearest party (ms)</text>`+"\n", left+plotW/2, top+plotH+32)
	p(`<text transform="translate(%.1f %.1f) rotate(-90)" text-anchor="middle" font-size="11">ms per signature</text>`+"\n", left-44, top+plotH/2)

	// One round trip, and the goal of one round trip plus 2 ms.
	var rt, goal []string
	for e := math.Log10(latencyXMin); e <= math.Log10(latencyXMax)+1e-9; e += 0.02 {
		v := math.Pow(10, e)
		rt = append(rt, fmt.Sprintf("%.1f,%.1f", x(v), y(v)))
		goal = append(goal, fmt.Sprintf("%.1f,%.1f", x(v), y(v+2)))
	}
	p(`<polyline class="bound" fill="none" stroke="#888" stroke-dasharray="2 3" points="%s"/>`+"\n", strings.Join(rt, " "))
	p(`<polyline class="goal" fill="none" stroke="#2ca02c" stroke-opacity="0.6" stroke-dasharray="6 4" points="%s"/>`+"\n", strings.Join(goal, " "))
}

// writeReferences draws the References: a shaded box for a range, a
// hollow diamond at the axis's left edge for a figure with no round trip.
func writeReferences(p func(string, ...any)) {
	x, y := latencyX, latencyY
	for _, ref := range References {
		p(`<g class="reference" data-series="%s">`, xmlEsc(ref.Label))
		if ref.RTTMax > ref.RTTMin {
			p(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" fill-opacity="0.12" stroke="%s" stroke-dasharray="4 3"><title>%s: %g–%g ms at %g–%g ms RTT</title></rect>`,
				x(ref.RTTMin), y(ref.LatMax), x(ref.RTTMax)-x(ref.RTTMin), y(ref.LatMin)-y(ref.LatMax), ref.Colour, ref.Colour,
				xmlEsc(ref.Label), ref.LatMin, ref.LatMax, ref.RTTMin, ref.RTTMax)
		} else {
			// No round trip is given: at the axis's left edge, named.
			cx, cy := x(ref.RTTMin)+8, y(ref.LatMin)
			p(`<path d="M%.1f %.1f l5 5 l-5 5 l-5 -5 z" fill="white" stroke="%s" stroke-width="1.5"><title>%s: %g ms</title></path>`,
				cx, cy-5, ref.Colour, xmlEsc(ref.Label), ref.LatMin)
			short, _, _ := strings.Cut(ref.Label, " ")
			p(`<text x="%.1f" y="%.1f" font-size="10" fill="%s">%s</text>`, cx+8, cy+4, ref.Colour, xmlEsc(short))
		}
		p("</g>\n")
	}
}

// latencyPoint is a point of a series: one network profile's round trip
// and latencies, in ms.
type latencyPoint struct{ rtt, p50, p99 float64 }

// points returns the points of s among results, by rising round trip.
func (s latencySerie) points(results []Result) []latencyPoint {
	var pts []latencyPoint
	for _, r := range results {
		if !s.matches(r) {
			continue
		}
		rtt, ok1 := r.Get("rtt-ms")
		p50, ok2 := r.Get("p50-ms")
		p99, _ := r.Get("p99-ms")
		if ok1 && ok2 {
			pts = append(pts, latencyPoint{rtt, p50, p99})
		}
	}
	slices.SortFunc(pts, func(a, b latencyPoint) int { return int(math.Copysign(1, a.rtt-b.rtt)) })
	return pts
}

// writeLatencySerie draws s, when results have a point of it: its p50s
// joined by a line, each with a bar up to its p99.
func writeLatencySerie(p func(string, ...any), s latencySerie, results []Result) {
	x, y := latencyX, latencyY
	pts := s.points(results)
	if len(pts) == 0 {
		return
	}
	p(`<g class="series" data-series="%s" stroke="%s" fill="%s">`, xmlEsc(s.label), s.colour, s.colour)
	var line []string
	for _, pt := range pts {
		line = append(line, fmt.Sprintf("%.1f,%.1f", x(pt.rtt), y(pt.p50)))
	}
	if len(line) > 1 {
		p(`<polyline fill="none" stroke-width="1.5" points="%s"/>`, strings.Join(line, " "))
	}
	for _, pt := range pts {
		if pt.p99 > pt.p50 {
			p(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke-width="1.2"/>`, x(pt.rtt), x(pt.rtt), y(pt.p50), y(pt.p99))
		}
		p(`<circle cx="%.1f" cy="%.1f" r="3.5"><title>%s at %g ms RTT: p50 %.1f ms, p99 %.1f ms</title></circle>`,
			x(pt.rtt), y(pt.p50), xmlEsc(s.label), pt.rtt, pt.p50, pt.p99)
	}
	p("</g>\n")
}

// writeLatencyLegend draws the legend right of the plot: the series that
// have a point, the two lines, then the References apart as published.
func writeLatencyLegend(p func(string, ...any), results []Result) {
	lx, ly := latencyLeft+latencyPlotW+20, latencyTop+8
	item := func(draw, label string) {
		p(`<g class="legend">%s<text x="%.1f" y="%.1f" font-size="11">%s</text></g>`+"\n", draw, lx+26, ly+4, xmlEsc(label))
		ly += 20
	}
	for _, s := range latencySeries {
		if !slices.ContainsFunc(results, s.matches) {
			continue // no point of it: no legend item that reads as a hidden series
		}
		item(fmt.Sprintf(`<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"/><line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s"/>`, lx+10, ly, s.colour, lx, lx+20, ly, ly, s.colour), s.label)
	}
	item(fmt.Sprintf(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#888" stroke-dasharray="2 3"/>`, lx, lx+20, ly, ly), "one round trip")
	item(fmt.Sprintf(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#2ca02c" stroke-dasharray="6 4"/>`, lx, lx+20, ly, ly), "goal: one round trip + 2 ms")
	ly += 10
	p(`<text x="%.1f" y="%.1f" font-size="11" font-weight="bold">Published, not ours:</text>`+"\n", lx, ly+4)
	ly += 18
	for _, ref := range References {
		if ref.RTTMax > ref.RTTMin {
			item(fmt.Sprintf(`<rect x="%.1f" y="%.1f" width="20" height="10" fill="%s" fill-opacity="0.12" stroke="%s" stroke-dasharray="4 3"/>`, lx, ly-5, ref.Colour, ref.Colour), ref.Label)
		} else {
			item(fmt.Sprintf(`<path d="M%.1f %.1f l5 5 l-5 5 l-5 -5 z" fill="white" stroke="%s" stroke-width="1.5"/>`, lx+10, ly-5, ref.Colour), ref.Label)
		}
	}
	p(`<text x="%.1f" y="%.1f" font-size="10" fill="#555">DKLS23, CGGMP21: 2-of-3 threshold ECDSA,</text>`+"\n", lx, ly+6)
	p(`<text x="%.1f" y="%.1f" font-size="10" fill="#555">n2d-standard-16; the delay of these medians</text>`+"\n", lx, ly+19)
	p(`<text x="%.1f" y="%.1f" font-size="10" fill="#555">is not given, so they sit at the left edge.</text>`+"\n", lx, ly+32)
}
