package report

import (
	"bytes"
	"context"
	"encoding/xml"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/signerkit/signerkit/internal/thresholdbench"
)

// thresholdFixture reads testdata/bench-threshold.txt, `go test -bench`
// output of BenchmarkThreshold (some rows run twice, as -count 2 does).
func thresholdFixture(t *testing.T) []thresholdbench.Result {
	t.Helper()
	f, err := os.Open("testdata/bench-threshold.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rs, err := thresholdbench.ParseResults(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 8 {
		t.Fatalf("%d threshold rows in the fixture, want 8", len(rs))
	}
	return rs
}

// section returns the report's threshold section.
func section(t *testing.T, md string) string {
	t.Helper()
	_, s, ok := strings.Cut(md, "## Threshold signing (FROST 2-of-3)\n")
	if !ok {
		t.Fatalf("no threshold section:\n%s", md)
	}
	s, _, _ = strings.Cut(s, "\n## ")
	return s
}

func TestThresholdSection(t *testing.T) {
	rep := &Report{Threshold: thresholdFixture(t), ThresholdSource: "from the fixture"}
	var b bytes.Buffer
	if err := rep.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	s := section(t, b.String())
	ours, published, ok := strings.Cut(s, "### Published figures, for reference (not our measurements)")
	if !ok {
		t.Fatalf("no published figures apart from ours:\n%s", s)
	}
	for _, want := range []string{
		"### Our measurements",
		"Ours, from the fixture.",
		// Medians of the two runs; the echo of the same profile beside them.
		"| same-zone | mem | 1 | 0.5 | 0.72 | 1.78 | 18.4 | 313 | 1.38 | 2.00 | 216 | 108 | 276 | 380 |",
		"| transatlantic | mem | 1 | 90.0 | 90.51 | 92.49 | 158.7 | 10 |",
		"| transatlantic | mem | 200 | 90.0 | 90.51 | 783.20 |",
		"| frost.Commit alone | 1 | 5930 | 21253 |",
		"| party-share | 254.0 | 300.0 |",
		"| in process | 4.79 (mean) |",
		// The goal at one sign in flight, with the signs behind each p50.
		"| same-zone | mem | 2 × 300 | 0.5 | 1.78 | 2.5 | yes |",
		"| transatlantic | mem | 2 × 300 | 90.0 | 92.49 | 92.0 | no, by 0.49 ms |",
		"![FROST 2-of-3 online signing latency against round trip time, with published references](" + ThresholdSVG + ")",
		"[docs/threshold.md](../threshold.md)",
	} {
		if !strings.Contains(ours, want) {
			t.Errorf("our part of the section lacks %q", want)
		}
	}
	for _, ref := range ThresholdReferences {
		if strings.Contains(ours, ref.Online) || !strings.Contains(published, "| "+ref.Scheme+" | "+mdEscape(ref.Online)+" |") {
			t.Errorf("%s: not only under the published figures", ref.Scheme)
		}
	}
	for _, not := range []string{"Not measured", "inflight=200 |"} {
		if strings.Contains(s, not) {
			t.Errorf("the section has %q", not)
		}
	}
	if t.Failed() {
		t.Log(s)
	}
}

// Without threshold rows the section says so, links no chart, and
// WriteDir writes none and removes an earlier run's.
func TestThresholdNotMeasured(t *testing.T) {
	rep := fixtureReport(t)
	var b bytes.Buffer
	if err := rep.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	s := section(t, b.String())
	if !strings.Contains(s, "**Not measured** in this report") || strings.Contains(s, ThresholdSVG) || strings.Contains(s, "DKLS23") {
		t.Errorf("section without rows:\n%s", s)
	}
	dir := t.TempDir()
	stale := filepath.Join(dir, ThresholdSVG)
	if err := os.WriteFile(stale, []byte("<svg/>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("an earlier run's %s is left: %v", ThresholdSVG, err)
	}
	if got := rep.Files(); !slices.Equal(got, []string{MarkdownFile, PayloadSVG, StagesSVG}) {
		t.Errorf("Files() = %q", got)
	}
}

// Rows the chart does not plot fill the tables, and no chart is linked.
func TestThresholdSectionWithoutChart(t *testing.T) {
	var rows []thresholdbench.Result
	for _, r := range thresholdFixture(t) {
		if r.Kind() != "sign" && r.Kind() != "echo" {
			rows = append(rows, r)
		}
	}
	rep := &Report{Threshold: rows}
	var b bytes.Buffer
	if err := rep.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	s := section(t, b.String())
	if strings.Contains(s, ThresholdSVG) || strings.Contains(s, "Online signing") || strings.Contains(s, "Goal at one sign") ||
		!strings.Contains(s, "| frost.Commit alone |") || !strings.Contains(s, "DKLS23") {
		t.Errorf("section of rows without a chart:\n%s", s)
	}
	if slices.Contains(rep.Files(), ThresholdSVG) {
		t.Errorf("Files() = %q", rep.Files())
	}
}

func TestThresholdWriteDir(t *testing.T) {
	rep := fixtureReport(t)
	rep.Threshold = thresholdFixture(t)
	dir := t.TempDir()
	if err := rep.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, ThresholdSVG))
	if err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(data))
	for {
		if _, err := d.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("%s is not well-formed XML: %v", ThresholdSVG, err)
		}
	}
	for _, want := range []string{`class="series" data-series="FROST 2-of-3, 1 in flight"`, `class="reference"`, "horcrux", "DKLS23", "CGGMP21"} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("%s lacks %q", ThresholdSVG, want)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 4 || !slices.Contains(rep.Files(), ThresholdSVG) {
		t.Errorf("%d files in the report folder, want 4; Files() = %q", len(ents), rep.Files())
	}
}

// The table of published figures states the latencies the chart draws.
func TestThresholdReferencesMatchChart(t *testing.T) {
	for _, ref := range ThresholdReferences {
		i := slices.IndexFunc(thresholdbench.References, func(c thresholdbench.Reference) bool { return c.Label == ref.Chart })
		if i < 0 {
			t.Errorf("%s: no chart reference %q", ref.Scheme, ref.Chart)
			continue
		}
		c := thresholdbench.References[i]
		for _, v := range []float64{c.LatMin, c.LatMax} {
			if s := strconv.FormatFloat(v, 'f', -1, 64); !strings.Contains(ref.Online, s) {
				t.Errorf("%s: %q does not state the chart's %s ms", ref.Scheme, ref.Online, s)
			}
		}
	}
	if len(ThresholdReferences) != len(thresholdbench.References) {
		t.Errorf("%d published figures in the table, %d in the chart", len(ThresholdReferences), len(thresholdbench.References))
	}
}

// The default selection is the affordable subset: signing at one in
// flight with the nonces in memory, and no networked key generation.
func TestDefaultThresholdRows(t *testing.T) {
	names := ThresholdRowNames()
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			t.Errorf("row %s twice", n)
		}
		seen[n] = true
	}
	for _, want := range []string{"sign/store=dir/net=transatlantic/inflight=200", "presign/store=dir/batch=64", "dkg/net=trio", "echo/net=trio"} {
		if !seen[want] {
			t.Errorf("no row %s", want)
		}
	}
	re := regexp.MustCompile(DefaultThresholdRows)
	var sel []string
	for _, n := range names {
		if re.MatchString(n) {
			sel = append(sel, n)
		}
	}
	nets := len(thresholdbench.Networks())
	if len(sel) != 2*nets+7 {
		t.Errorf("default rows %q: %d, want %d", sel, len(sel), 2*nets+7)
	}
	for _, n := range sel {
		if strings.Contains(n, "store=dir") || strings.HasPrefix(n, "dkg/net=") || strings.HasPrefix(n, "sign/") && !strings.HasSuffix(n, "/inflight=1") {
			t.Errorf("the default runs %s", n)
		}
	}
}

func TestRunThreshold(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three parties")
	}
	before := flag.Lookup("test.benchtime").Value.String()
	cfg := RunConfig{ThresholdRows: regexp.MustCompile(`^(sign/store=mem/net=same-zone/inflight=1|compute/coordinator-commitment)$`), ThresholdBenchtime: "20x"}
	rs, err := RunThreshold(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if after := flag.Lookup("test.benchtime").Value.String(); after != before {
		t.Errorf("test.benchtime left at %s, was %s", after, before)
	}
	if len(rs) != 2 || rs[0].Name != "sign/store=mem/net=same-zone/inflight=1" || rs[1].Name != "compute/coordinator-commitment" {
		t.Fatalf("rows %+v", rs)
	}
	if !slices.Equal(rs[0].Iterations, []int{20}) {
		t.Errorf("sign row iterations %v, want [20]", rs[0].Iterations)
	}
	for _, unit := range []string{"p50-ms", "p99-ms", "rtt-ms", "payload-B/party", "ns/op"} {
		if v, ok := rs[0].Get(unit); !ok || v <= 0 {
			t.Errorf("sign row %s = %v, %v", unit, v, ok)
		}
	}
	if v, ok := rs[1].Get("cpu-µs/op"); !ok || v <= 0 {
		t.Errorf("compute row cpu-µs/op = %v, %v", v, ok)
	}
	if rs, err := RunThreshold(context.Background(), RunConfig{ThresholdRows: regexp.MustCompile(`^none$`)}); err != nil || rs != nil {
		t.Errorf("no row selected: %v, %v", rs, err)
	}
}

func TestThresholdBenchtime(t *testing.T) {
	for s, ok := range map[string]bool{"1s": true, "300ms": true, "20x": true, "0x": false, "-1s": false, "0s": false, "x": false, "fast": false, "": false} {
		if err := CheckBenchtime(s); (err == nil) != ok {
			t.Errorf("CheckBenchtime(%q) = %v", s, err)
		}
	}
	_, err := Run(context.Background(), RunConfig{Backends: regexp.MustCompile(`^$`), NoVerify: true, NoPhases: true, ThresholdBenchtime: "0x"})
	if err == nil {
		t.Error("Run accepted a benchtime of 0x")
	}
}
