package report

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/signerkit/signerkit/internal/bench"
)

// verifyFixture is a report of go test -bench output with every row of
// the comparison and one other verification case.
func verifyFixture(t *testing.T) *Report {
	t.Helper()
	f, err := os.Open("testdata/bench-verify.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sign, verify, err := ParseBenchOutput(f)
	if err != nil {
		t.Fatal(err)
	}
	return &Report{Rows: sign, Verifies: verify, Host: "test host"}
}

func TestParseBenchVerifyRows(t *testing.T) {
	rep := verifyFixture(t)
	if len(rep.Rows) != 6 || len(rep.Verifies) != 7 {
		t.Fatalf("%d sign and %d verification rows, want 6 and 7 (the -count duplicate merged)", len(rep.Rows), len(rep.Verifies))
	}
	for _, row := range rep.Verifies {
		if row.Backend == "p256" && (row.Payload != 32 || row.E2E.Avg != 0.061 || row.HostMs != 0.061) {
			t.Errorf("p256 row = %+v, want the two runs averaged to 0.061 ms", row)
		}
		if len(row.Counters) != 0 {
			t.Errorf("%s: counters %v from B/op and allocs/op", row.Backend, row.Counters)
		}
	}
	// The sign-only reader leaves verification lines out.
	f, _ := os.Open("testdata/bench-verify.txt")
	defer f.Close()
	sign, err := ParseBench(f)
	if err != nil || len(sign) != 6 {
		t.Errorf("ParseBench: %d rows, %v; want the 6 sign rows", len(sign), err)
	}
	for _, in := range []string{
		"BenchmarkVerify/alg=x/payload=abc-2 10 5 ns/op\n",
		"BenchmarkVerify/alg=x-2 10 5 ns/op\n",
		"BenchmarkVerify/payload=32-2 10 5 ns/op\n",
	} {
		if _, _, err := ParseBenchOutput(strings.NewReader(in)); err == nil {
			t.Errorf("accepted %q", in)
		}
	}
}

// comparisonTable returns the cells of the comparison table, by the
// first cell of each line.
func comparisonTable(t *testing.T, md string) map[string][]string {
	t.Helper()
	_, sec, ok := strings.Cut(md, "## BLS against Ed25519")
	if !ok {
		t.Fatalf("no comparison section:\n%s", md)
	}
	out := map[string][]string{}
	for _, line := range strings.Split(sec, "\n") {
		if !strings.HasPrefix(line, "| sign") && !strings.HasPrefix(line, "| verify") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		out[cells[0]] = cells
	}
	if len(out) != 4 {
		t.Fatalf("comparison table has %d lines, want 4:\n%s", len(out), sec)
	}
	return out
}

func TestComparison(t *testing.T) {
	rep := verifyFixture(t)
	var b bytes.Buffer
	if err := rep.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	table := comparisonTable(t, md)
	mean := func(rows []Row, name string, payload int) float64 {
		for _, r := range rows {
			if r.Backend == name && r.Payload == payload {
				return r.E2E.Avg * 1000
			}
		}
		t.Fatalf("no row %s/%d", name, payload)
		return 0
	}
	for _, pub := range Published {
		size := map[int]string{32: "32 B", MiB: "1 MiB"}[pub.Payload]
		rows, ed, blst, circl := rep.Rows, "raw-ed25519", "bls-minpk", "raw-circl-minpk"
		if pub.Op == VerifyOp {
			rows, ed, blst, circl = rep.Verifies, "ed25519", "bls12381-minpk", "circl-bls12381-minpk"
		}
		e, bl, ci := mean(rows, ed, pub.Payload), mean(rows, blst, pub.Payload), mean(rows, circl, pub.Payload)
		want := []string{pub.Op.String() + " " + size,
			fmt.Sprintf("%.2f", pub.BLS), fmt.Sprintf("%.2f", pub.Ed), fmt.Sprintf("%.2f", pub.BLS/pub.Ed),
			fmt.Sprintf("%.2f", bl), fmt.Sprintf("%.2f", ci), fmt.Sprintf("%.2f", e),
			fmt.Sprintf("%.2f", bl/e), fmt.Sprintf("%.2f", ci/e)}
		got := table[want[0]]
		got[3] = strings.TrimSuffix(got[3], "¹")
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("line %q:\n got %q\nwant %q", want[0], got, want)
		}
	}
	// The published ratio column has one figure its own means do not give.
	if !strings.Contains(md, "sign 32 B: 114.71, printed 114.72") || strings.Count(md, "printed") != 1 {
		t.Errorf("the recomputed published ratio is not footnoted once:\n%s", md)
	}
	// The paragraph's claims come from the rows.
	perByteNs := func(rows []Row, name string) float64 {
		return (mean(rows, name, MiB) - mean(rows, name, 32)) * 1000 / (MiB - 32)
	}
	es, ev := perByteNs(rep.Rows, "raw-ed25519"), perByteNs(rep.Verifies, "ed25519")
	bs, bv := perByteNs(rep.Rows, "bls-minpk"), perByteNs(rep.Verifies, "bls12381-minpk")
	cross := 32 + (mean(rep.Rows, "bls-minpk", 32)-mean(rep.Rows, "raw-ed25519", 32))*1000/(es-bs)
	for _, want := range []string{
		fmt.Sprintf("Here a byte adds %.2f ns to an Ed25519 sign and %.2f ns to a verify, and %.2f and %.2f ns to blst's", es, ev, bs, bv),
		fmt.Sprintf("costs %.2f× a byte of SHA-512", bv/ev),
		fmt.Sprintf("once a message passes about %.0f KiB", cross/1024),
		fmt.Sprintf("here blst costs %.0f× Ed25519's time to sign 32 B", mean(rep.Rows, "bls-minpk", 32)/mean(rep.Rows, "raw-ed25519", 32)),
		fmt.Sprintf("circl, another current library, takes %.2f× blst's time to verify 32 B",
			mean(rep.Verifies, "circl-bls12381-minpk", 32)/mean(rep.Verifies, "bls12381-minpk", 32)),
		"than this report's (test host)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the comparison does not say %q:\n%s", want, md)
		}
	}
	if !strings.Contains(md, "## Verification") || !strings.Contains(md, "| p256 | 61.00 | — |") {
		t.Errorf("no verification table with p256's mean:\n%s", md)
	}
}

// Without BLS rows (CGO_ENABLED=0, or no bls backend), or with no rows at
// all, the comparison says what was not measured and nothing panics.
func TestComparisonWithoutBLS(t *testing.T) {
	full := verifyFixture(t)
	noBLS := &Report{}
	for _, row := range full.Rows {
		if row.Backend == "raw-ed25519" {
			noBLS.Rows = append(noBLS.Rows, row)
		}
	}
	for _, row := range full.Verifies {
		if row.Backend == "ed25519" {
			noBLS.Verifies = append(noBLS.Verifies, row)
		}
	}
	for name, rep := range map[string]*Report{"no BLS": noBLS, "empty": {}, "fixture": fixtureReport(t)} {
		var b bytes.Buffer
		if err := rep.WriteMarkdown(&b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		md := b.String()
		for key, cells := range comparisonTable(t, md) {
			if cells[4] != "not measured" || cells[5] != "not measured" || cells[7] != "—" || cells[8] != "—" {
				t.Errorf("%s: line %q: %q, want BLS not measured", name, key, cells)
			}
			if name != "fixture" && (name == "no BLS") == (cells[6] == "not measured") {
				t.Errorf("%s: line %q: Ed25519 cell %q", name, key, cells[6])
			}
		}
		if !strings.Contains(md, "no BLS rows at 32 B") || strings.Contains(md, "blst costs") || strings.Contains(md, "BLS signs faster") {
			t.Errorf("%s: the paragraph claims what was not measured:\n%s", name, md)
		}
		if name == "no BLS" && !strings.Contains(md, "Here a byte adds") {
			t.Errorf("%s: Ed25519's own per-byte cost is missing", name)
		}
		if name == "empty" && strings.Contains(md, "Here a byte adds") {
			t.Errorf("%s: per-byte costs from no rows", name)
		}
	}
}

func TestCompared(t *testing.T) {
	for _, tc := range []struct {
		op      Op
		name    string
		payload int
		want    bool
	}{
		{SignOp, "raw-ed25519", 32, true},
		{SignOp, "raw-ed25519", MiB, true},
		{SignOp, "raw-ed25519", 64, false},
		{SignOp, "bls-minpk", 32, true},
		{SignOp, "raw-circl-minpk", MiB, true},
		{SignOp, "ed25519", 32, false}, // a verification case's name
		{VerifyOp, "ed25519", 32, true},
		{VerifyOp, "bls12381-minpk", MiB, true},
		{VerifyOp, "circl-bls12381-minpk", 32, true},
		{VerifyOp, "raw-ed25519", 32, false},
		{VerifyOp, "p256", 32, false},
	} {
		if got := Compared(tc.op, tc.name, tc.payload); got != tc.want {
			t.Errorf("Compared(%v, %s, %d) = %v", tc.op, tc.name, tc.payload, got)
		}
	}
}

func TestRunVerify(t *testing.T) {
	calls := 0
	c := bench.VerifyCase{Name: "ed25519", Setup: func(int) (func() error, error) {
		return func() error { calls++; return nil }, nil
	}}
	// A compared row takes CompareSamples whatever the budget; another
	// row stops at MaxSigns.
	cfg := RunConfig{RowBudget: time.Nanosecond, MaxSigns: 5, CompareSamples: 40}
	row, err := RunVerify(context.Background(), c, 32, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if row.E2E.N != 40 || calls != 41 || row.Backend != "ed25519" || row.Payload != 32 || row.Source != "run" {
		t.Errorf("compared row: %+v after %d calls, want 40 samples and one verification before", row, calls)
	}
	calls = 0
	if row, err = RunVerify(context.Background(), c, 64, cfg); err != nil || row.E2E.N != 3 || calls != 4 {
		t.Errorf("row of 64 B: %d samples, %v; want MinSigns (3) with a budget of 1 ns", row.E2E.N, err)
	}
	cfg.RowBudget = time.Hour
	if row, err = RunVerify(context.Background(), c, 64, cfg); err != nil || row.E2E.N != 5 {
		t.Errorf("row of 64 B: %d samples, %v; want MaxSigns (5)", row.E2E.N, err)
	}
	left := 3
	bad := bench.VerifyCase{Name: "bad", Setup: func(int) (func() error, error) {
		return func() error {
			if left--; left < 0 {
				return errors.New("bad signature")
			}
			return nil
		}, nil
	}}
	if _, err := RunVerify(context.Background(), bad, 32, RunConfig{RowBudget: time.Hour}); err == nil {
		t.Error("a verification that starts failing passed")
	}
	broken := bench.VerifyCase{Name: "broken", Setup: func(int) (func() error, error) { return nil, errors.New("no key") }}
	if _, err := RunVerify(context.Background(), broken, 32, RunConfig{}); err == nil {
		t.Error("a failed setup passed")
	}
}

// Run times the registered verification cases that cfg selects, with the
// payloads it gives.
func TestRunSelectsVerifyCases(t *testing.T) {
	cfg := RunConfig{Backends: regexp.MustCompile(`^$`), Verify: regexp.MustCompile(`^p256$`), Payloads: []int{32, 64},
		RowBudget: time.Millisecond, NoPhases: true, NoThreshold: true}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 0 || len(rep.Verifies) != 2 || rep.Verifies[0].Backend != "p256" || rep.Verifies[1].Payload != 64 {
		t.Errorf("run: %d sign rows, verification rows %+v", len(rep.Rows), rep.Verifies)
	}
	cfg.NoVerify = true
	if rep, err = Run(context.Background(), cfg); err != nil || len(rep.Verifies) != 0 {
		t.Errorf("NoVerify: %d verification rows, %v", len(rep.Verifies), err)
	}
}

func TestVerifyPanel(t *testing.T) {
	rep := verifyFixture(t)
	var b bytes.Buffer
	if err := rep.WritePayloadSVG(&b); err != nil {
		t.Fatal(err)
	}
	panels := svgPanels(t, b.Bytes())
	last := panels[len(panels)-1]
	if last.family != VerifyFamily || len(last.series) != 4 || last.series[0] != "verify ed25519" {
		t.Errorf("last panel %q with series %q, want the verification cases", last.family, last.series)
	}
	if !strings.Contains(b.String(), "ms per verification") || !strings.Contains(b.String(), ">1 MiB<") {
		t.Error("the verify panel's axis does not say what it measures, or 1 MiB is not labelled")
	}
	var w bytes.Buffer
	bw := bufio.NewWriter(&w)
	(&Report{Verifies: rep.Verifies}).writeVerifies(bw)
	bw.Flush()
	if !strings.Contains(w.String(), "| algorithm | 32 B | 1 MiB |") {
		t.Errorf("verification table header:\n%s", w.String())
	}
}

// Per-byte costs come from medians when the rows have samples: a busy
// host moves a mean of few 1 MiB samples more than their median.
func TestComparisonPerByteFromMedians(t *testing.T) {
	row := func(name string, payload int, p50, avg float64) Row {
		return Row{Backend: name, Payload: payload, Source: "run", E2E: Dist{N: 1000, P50: p50, Avg: avg}}
	}
	rep := &Report{
		Rows:     []Row{row("raw-ed25519", 32, 0.02, 0.1), row("raw-ed25519", MiB, 5.02, 5.5)},
		Verifies: []Row{row("ed25519", 32, 0.05, 0.3), row("ed25519", MiB, 2.05, 2.1)},
	}
	var b bytes.Buffer
	bw := bufio.NewWriter(&b)
	rep.writeComparison(bw)
	bw.Flush()
	want := fmt.Sprintf("Here a byte adds %.2f ns to an Ed25519 sign and %.2f ns to a verify (medians",
		(5.02-0.02)*1e6/(MiB-32), (2.05-0.05)*1e6/(MiB-32))
	if !strings.Contains(b.String(), want) {
		t.Errorf("the comparison does not say %q:\n%s", want, b.String())
	}
	if !strings.Contains(b.String(), "| sign 32 B | 2220.78 | 19.36 | 114.71¹ | not measured | not measured | 100.00 |") {
		t.Errorf("the table does not give the mean:\n%s", b.String())
	}
}
