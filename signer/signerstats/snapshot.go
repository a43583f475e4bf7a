package signerstats

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Snapshot is a copy of a Recorder's statistics (those of a
// signertrace.Instrumented, a privval endpoint or server).
type Snapshot struct {
	Since  time.Time // when counting began (Instrument or Reset)
	Taken  time.Time // when the snapshot was taken
	Labels []LabelStats
}

// LabelStats are the latency statistics of the successful operations
// filed under one label. Percentiles come from a log-linear histogram and are within
// 1/128 of the exact value; Count, Total, Min and Max are exact.
type LabelStats struct {
	Label  string
	Count  uint64 // successful operations
	Errors uint64 // failed ones, not in the latency figures
	Total  time.Duration
	Min    time.Duration
	Max    time.Duration
	P50    time.Duration
	P90    time.Duration
	P99    time.Duration
}

// Mean returns the average latency, or 0 when nothing succeeded.
func (l LabelStats) Mean() time.Duration {
	if l.Count == 0 {
		return 0
	}
	return l.Total / time.Duration(l.Count)
}

// Label returns the statistics for label and whether there are any.
func (s Snapshot) Label(label string) (LabelStats, bool) {
	for _, l := range s.Labels {
		if l.Label == label {
			return l, true
		}
	}
	return LabelStats{}, false
}

var statsHeader = []string{"label", "count", "errors", "min", "p50", "p90", "p99", "max", "mean", "total"}

func (l LabelStats) cells() []string {
	return []string{
		l.Label, fmt.Sprint(l.Count), fmt.Sprint(l.Errors),
		fmtMs(l.Min), fmtMs(l.P50), fmtMs(l.P90), fmtMs(l.P99), fmtMs(l.Max), fmtMs(l.Mean()), fmtMs(l.Total),
	}
}

// fmtMs formats d in milliseconds, keeping microseconds.
func fmtMs(d time.Duration) string {
	return fmt.Sprintf("%.3f", float64(d)/float64(time.Millisecond))
}

// WriteText writes the statistics as an aligned plain-text table, times in
// milliseconds.
func (s Snapshot) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := append([]string(nil), statsHeader...)
	for i := 3; i < len(header); i++ {
		header[i] += " ms"
	}
	fmt.Fprintln(tw, strings.Join(header, "\t")+"\t")
	for _, l := range s.Labels {
		fmt.Fprintln(tw, strings.Join(l.cells(), "\t")+"\t")
	}
	return tw.Flush()
}

// WriteMarkdown writes the statistics as a Markdown table, times in
// milliseconds.
func (s Snapshot) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("| " + strings.Join(statsHeader[:3], " | "))
	for _, h := range statsHeader[3:] {
		b.WriteString(" | " + h + " (ms)")
	}
	b.WriteString(" |\n|---|")
	for range statsHeader[1:] {
		b.WriteString("---:|")
	}
	b.WriteByte('\n')
	for _, l := range s.Labels {
		c := l.cells()
		c[0] = strings.NewReplacer("|", `\|`, "\n", " ").Replace(c[0])
		b.WriteString("| " + strings.Join(c, " | ") + " |\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// String returns the plain-text table.
func (s Snapshot) String() string {
	var b strings.Builder
	_ = s.WriteText(&b)
	return b.String()
}
