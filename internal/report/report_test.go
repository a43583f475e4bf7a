package report

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/signerkit/signerkit/signer/signertrace"
)

func readFixture(t *testing.T) []Row {
	t.Helper()
	f, err := os.Open("testdata/bench.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := ParseBench(f)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestParseBench(t *testing.T) {
	rows := readFixture(t)
	if len(rows) != 9 {
		for _, r := range rows {
			t.Log(r.Path(), r.Payload)
		}
		t.Fatalf("got %d rows, want 9 (the -count duplicate merged, other benchmarks skipped)", len(rows))
	}
	byKey := map[string]Row{}
	for _, r := range rows {
		byKey[r.Path()+"/"+strconv.Itoa(r.Payload)] = r
	}
	traced := byKey["inprocess-ed25519-traced/128"]
	if math.Abs(traced.E2E.Avg-0.0193) > 1e-9 || math.Abs(traced.HostMs-0.019301) > 1e-9 {
		t.Errorf("-count runs not averaged: %+v", traced)
	}
	lg := byKey["ledger-ledgergo chunk=32/108"]
	if lg.Chunk != 32 || lg.E2E.Avg != 738.06 || lg.ModeledMs != 738 {
		t.Errorf("ledger row = %+v", lg)
	}
	if d := lg.Dominant(); d.Name != "device" || !d.Modeled() || d.Ms != 526 {
		t.Errorf("dominant = %+v", d)
	}
	if cov := lg.Coverage(); math.Abs(cov-1) > 0.02 {
		t.Errorf("stages cover %.3f of e2e", cov)
	}
	var apdus float64
	for _, c := range lg.Counters {
		if c.Name == "apdus" {
			apdus = c.PerOp
		}
		if c.Name == "B" || c.Name == "allocs" || c.Name == "ns" {
			t.Errorf("memory/time unit %q taken for a counter", c.Name)
		}
	}
	if apdus != 4 {
		t.Errorf("apdus/op = %v", apdus)
	}
	if kb := byKey["keybase-persign-ed25519/128"]; kb.Dominant().Name != "kdf" || kb.Dominant().Modeled() {
		t.Errorf("keybase dominant = %+v", kb.Dominant())
	}
	if raw := byKey["raw-ed25519/32"]; len(raw.Stages) != 0 || raw.E2E.Avg != 0.01921 {
		t.Errorf("raw row = %+v", raw)
	}
}

func TestParseBenchRejectsGarbledRows(t *testing.T) {
	for _, in := range []string{
		"BenchmarkSign/backend=x/payload=abc-2 10 5 ns/op\n",
		"BenchmarkSign/backend=x-2 10 5 ns/op\n",
		"BenchmarkSign/backend=x/payload=32-2 10 5 ns/op 7\n",
		"BenchmarkSign/backend=x/payload=32-2 10 five ns/op\n",
		"BenchmarkSign/oops/payload=32-2 10 5 ns/op\n",
	} {
		if _, err := ParseBench(strings.NewReader(in)); err == nil {
			t.Errorf("accepted %q", in)
		}
	}
}

func fixtureReport(t *testing.T) *Report {
	return &Report{Rows: readFixture(t), Source: "fixture", Phases: []Phase{
		{Backend: "ledger-hid chunk=250", Phase: "prevote", Bytes: 108, Dist: NewDist([]float64{529, 530, 531}), Modeled: true},
	}}
}

func TestMarkdown(t *testing.T) {
	var b bytes.Buffer
	if err := fixtureReport(t).WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	// The summary has one row per signer path at the size nearest a vote.
	want := []string{
		"| ledger-ledgergo chunk=32 | 108 | 738.1 (mean) | — | modeled 100.0% | 73.81% | device (modeled, 71%) | device 526.0 (modeled) + stall 200.0 (modeled) + wire 12.00 (modeled) + transport 0.050 (measured) + other 0.0100 (measured) | 100.0% |",
		"| ledger-ledgergo chunk=128 | 108 | 579.0 (mean) |",
		"| yubihsm-ed25519 | 128 | 137.2 (mean) | — | modeled 99.9% | 13.72% | device (modeled, 100%) |",
		"| keybase-persign-ed25519 | 128 | 281.0 (mean) | — | measured | 28.10% | kdf (measured, 100%) | kdf 280.5 (measured) + sign 0.030 (measured) + other 0.470 (measured) | 99.8% |",
		"| raw-ed25519 | 128 | 0.020 (mean) | — | measured | 0.00% | — | — (no trace) | — |",
		"| ledger-hid chunk=250 | prevote | 108 | 3 | 529.0 | 530.0 | 531.0 | 531.0 | measured + modeled |",
		"### yubihsm-ed25519",
		"| 32 | — | — | 105.2 | modeled 99.8% |",
		"apdus 4, hid-reports 12",
		"![end-to-end latency against payload size, per signer path](latency-payload.svg)",
	}
	for _, w := range want {
		if !strings.Contains(md, w) {
			t.Errorf("markdown lacks %q", w)
		}
	}
	if t.Failed() {
		t.Log(md)
	}
}

// svgSeries parses an SVG, failing on malformed XML, and returns the
// data-series names of its <g class="series"> elements and whether a
// timeout line is drawn.
func svgSeries(t *testing.T, data []byte) (series []string, timeout bool) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	root := true
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if root {
			if se.Name.Local != "svg" || se.Name.Space != "http://www.w3.org/2000/svg" {
				t.Fatalf("root element %v", se.Name)
			}
			root = false
		}
		attr := map[string]string{}
		for _, a := range se.Attr {
			attr[a.Name.Local] = a.Value
		}
		if se.Name.Local == "g" && attr["class"] == "series" {
			series = append(series, attr["data-series"])
		}
		if se.Name.Local == "line" && attr["class"] == "timeout" {
			timeout = true
		}
	}
	return series, timeout
}

func TestSVGs(t *testing.T) {
	rep := fixtureReport(t)
	var pay, st bytes.Buffer
	if err := rep.WritePayloadSVG(&pay); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteStagesSVG(&st); err != nil {
		t.Fatal(err)
	}
	series, timeout := svgSeries(t, pay.Bytes())
	wantPaths := []string{"raw-ed25519", "inprocess-ed25519-traced", "keybase-persign-ed25519", "ledger-ledgergo chunk=32", "ledger-ledgergo chunk=128", "yubihsm-ed25519"}
	if strings.Join(series, ",") != strings.Join(wantPaths, ",") {
		t.Errorf("payload chart series = %q, want %q", series, wantPaths)
	}
	if !timeout {
		t.Error("payload chart has no timeout line although ledger rows pass 100 ms")
	}
	series, timeout = svgSeries(t, st.Bytes())
	wantStages := []string{"kdf", "stall", "transport", "wire", "device", "sign", "other"}
	if strings.Join(series, ",") != strings.Join(wantStages, ",") {
		t.Errorf("stages chart series = %q, want %q", series, wantStages)
	}
	if !timeout {
		t.Error("stages chart has no timeout line")
	}
	if !strings.Contains(st.String(), "ledger-ledgergo chunk=32 device: 526.0 ms (modeled)") {
		t.Error("stage segments do not say modeled")
	}
}

func TestWriteDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	if err := fixtureReport(t).WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{MarkdownFile, PayloadSVG, StagesSVG} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || len(data) == 0 {
			t.Errorf("%s: %v, %d bytes", f, err, len(data))
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 3 {
		t.Errorf("%d files in the report folder, want 3 (temporary files left?)", len(ents))
	}
}

func TestDist(t *testing.T) {
	s := make([]float64, 100)
	for i := range s {
		s[i] = float64(100 - i)
	}
	d := NewDist(s)
	if d.N != 100 || d.Min != 1 || d.Max != 100 || d.P50 != 50 || d.P99 != 99 || d.Avg != 50.5 {
		t.Errorf("dist = %+v", d)
	}
	if (NewDist(nil) != Dist{}) {
		t.Error("empty dist not zero")
	}
}

func FuzzParseBench(f *testing.F) {
	data, err := os.ReadFile("testdata/bench.txt")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(data))
	f.Add("BenchmarkSign/backend=a/payload=1/chunk=2-8 1 2 ns/op 3 e2e-ms/op 4 device-ms/op\n")
	verify, err := os.ReadFile("testdata/bench-verify.txt")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(verify))
	f.Fuzz(func(t *testing.T, in string) {
		rows, verifies, err := ParseBenchOutput(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, r := range verifies {
			if r.Backend == "" || r.Payload <= 0 || r.Chunk < 0 {
				t.Fatalf("bad verification row %+v", r)
			}
		}
		// The parts that read verification rows; all of WriteMarkdown is
		// too slow to fuzz (its Ledger table encodes tm2 messages).
		var md bytes.Buffer
		bw := bufio.NewWriter(&md)
		rep := &Report{Rows: rows, Verifies: verifies}
		rep.writeVerifies(bw)
		rep.writeComparison(bw)
		bw.Flush()
		if err := rep.WritePayloadSVG(&md); err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if r.Backend == "" || r.Payload <= 0 || r.Chunk < 0 {
				t.Fatalf("bad row %+v", r)
			}
			var b bytes.Buffer
			rep := &Report{Rows: rows}
			if err := rep.WriteStagesSVG(&b); err != nil {
				t.Fatal(err)
			}
			svgSeries(t, b.Bytes())
		}
	})
}

func TestStageListNamesProfiles(t *testing.T) {
	row := Row{E2E: Dist{Avg: 530.1}, Stages: []Stage{
		{Name: "device", Ms: 526, ModeledMs: 526, Profile: "nanosplus (docs/latency-profiles.md §1)"},
		{Name: "transport", Ms: 0.1},
		{Name: "wire", Ms: 4, ModeledMs: 4},
	}}
	want := "device 526.0 (modeled: nanosplus) + wire 4.00 (modeled) + transport 0.100 (measured)"
	if got := stageList(row); got != want {
		t.Errorf("stageList = %q, want %q", got, want)
	}
	rep := &Report{Rows: []Row{row}}
	var b bytes.Buffer
	if err := rep.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "- nanosplus (docs/latency-profiles.md §1)") {
		t.Error("the profile and its source are not listed under Profiles")
	}
}

// Only a run's signs get a cancellable context (see signContext); the note
// that explains pkcs11's `other` by it is not put on rows from go test
// -bench, whose signs get none.
func TestCancellableContextNote(t *testing.T) {
	const note = "get a context that can be cancelled"
	for _, tc := range []struct {
		source string
		want   bool
	}{{"bench", false}, {"run", true}} {
		rep := &Report{Rows: []Row{{Backend: "b", Payload: 32, Source: tc.source, E2E: Dist{Avg: 1}}}}
		var b bytes.Buffer
		if err := rep.WriteMarkdown(&b); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(b.String(), note); got != tc.want {
			t.Errorf("rows from %s: the note is there: %v, want %v", tc.source, got, tc.want)
		}
	}
}

// The stages chart draws only the stages it knows: every signer stage must
// have its place and colour there, or its time would vanish from the bars.
func TestStagesChartKnowsEveryStage(t *testing.T) {
	for _, st := range signertrace.Stages() {
		if !slices.Contains(stageOrder, st.String()) || stageColours[st.String()] == "" {
			t.Errorf("stage %s has no place or colour in the stages chart", st)
		}
	}
}

// The remote-signer rows get what they add over the in-process key, beside
// gnokms's ~0.5 ms.
func TestRemoteSignerNote(t *testing.T) {
	rep := &Report{Rows: []Row{
		{Backend: "inprocess-ed25519", Payload: 128, Source: "bench", E2E: Dist{Avg: 0.02}},
		{Backend: "privval-native-unix", Payload: 108, Source: "bench", E2E: Dist{Avg: 0.06}},
	}}
	var b bytes.Buffer
	if err := rep.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"privval-native-unix 0.040", "gnokms sidecar added ~0.5 ms"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the report does not say %q:\n%s", want, b.String())
		}
	}
	rep.Rows = rep.Rows[:1]
	if note := rep.remoteSignerNote(); note != "" {
		t.Errorf("a note without remote-signer rows: %q", note)
	}
}
