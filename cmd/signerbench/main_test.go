package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signerkit/signerkit/internal/report"
)

func TestReportFromBenchOutput(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"-input", "../../internal/report/testdata/bench.txt", "-out", out}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "| ledger-ledgergo chunk=128 | 108 | 579.0 (mean) |") {
		t.Errorf("report lacks the ledger row:\n%s", md)
	}
}

func TestReportFromARun(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	args := []string{"-backends", "^inprocess-ed25519$", "-payloads", "32,128", "-row-time", "10ms", "-heights", "8", "-no-verify", "-no-threshold", "-out", out}
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	wants := []string{"| inprocess-ed25519 | 128 |", "| inprocess-ed25519 | prevote | 108 | 8 |", "| inprocess-ed25519 | proposal | 119 | 1 |"}
	if _, err := os.Stat("/proc/loadavg"); err == nil {
		wants = append(wants, "- load average (1 min) of the host: ")
	}
	for _, want := range wants {
		if !strings.Contains(string(md), want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}

// Rows of BenchmarkVerify and the BLS comparison's rows come through
// -input into the verification table and the comparison.
func TestReportWithVerification(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"-input", "../../internal/report/testdata/bench-verify.txt", "-out", out}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Verification", "| bls12381-minpk |", "## BLS against Ed25519", "| sign 1 MiB | 5822.96 | 5826.58 | 1.00 | 1100.00 |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}

// A run selects verification cases with -verify and payloads with
// -payloads, or skips them with -no-verify.
func TestVerifyFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"-verify", "^p256$"}, true},
		{[]string{"-verify", "^p256$", "-no-verify"}, false},
	} {
		out := t.TempDir()
		var stdout, stderr bytes.Buffer
		args := append([]string{"-backends", "^raw-ed25519$", "-payloads", "32", "-row-time", "5ms", "-no-phases", "-compare-samples", "0", "-no-threshold", "-out", out}, tc.args...)
		if err := run(context.Background(), args, &stdout, &stderr); err != nil {
			t.Fatalf("%q: %v\n%s", tc.args, err, stderr.String())
		}
		md, err := os.ReadFile(filepath.Join(out, "report.md"))
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Contains(string(md), "| p256 |")
		if got != tc.want || strings.Contains(string(md), "| ed25519 |") {
			t.Errorf("%q: p256 verified: %v, want %v; or an unselected case ran:\n%s", tc.args, got, tc.want, md)
		}
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-payloads", "32,x"},
		{"-chunks", "0"},
		{"-sim", "fast"},
		{"-backends", "("},
		{"-verify", "("},
		{"-compare-samples", "-1"},
		{"-input", "/nonexistent/bench.txt"},
		{"-threshold", "("},
		{"-threshold-benchtime", "0x"},
		{"-threshold-benchtime", "soon"},
		{"stray"},
	} {
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), append(args, "-out", t.TempDir()), &stdout, &stderr); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}

// The threshold rows of -input go into the report's section and chart;
// -no-threshold leaves them out, and the section says they were not
// measured.
func TestThresholdFromBenchOutput(t *testing.T) {
	for _, noThreshold := range []bool{false, true} {
		out := t.TempDir()
		args := []string{"-input", "../../internal/report/testdata/bench-threshold.txt", "-out", out}
		if noThreshold {
			args = append(args, "-no-threshold")
		}
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), args, &stdout, &stderr); err != nil {
			t.Fatalf("%q: %v\n%s", args, err, stderr.String())
		}
		md, err := os.ReadFile(filepath.Join(out, "report.md"))
		if err != nil {
			t.Fatal(err)
		}
		_, svgErr := os.Stat(filepath.Join(out, report.ThresholdSVG))
		row := strings.Contains(string(md), "| transatlantic | mem | 1 | 90.0 | 90.51 | 92.49 |")
		notMeasured := strings.Contains(string(md), "**Not measured**")
		if row == noThreshold || notMeasured != noThreshold || (svgErr == nil) == noThreshold ||
			strings.Contains(stdout.String(), report.ThresholdSVG) == noThreshold {
			t.Errorf("-no-threshold %v: row %v, not measured %v, chart %v, stdout %q\n%s", noThreshold, row, notMeasured, svgErr, stdout.String(), md)
		}
	}
}

// A run makes the threshold rows -threshold selects, for
// -threshold-benchtime each; one that selects none leaves them not
// measured.
func TestThresholdRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three threshold parties")
	}
	for _, sel := range []string{"sign/store=mem/net=same-zone/inflight=1$", "^none$"} {
		out := t.TempDir()
		var stdout, stderr bytes.Buffer
		args := []string{"-backends", "^raw-ed25519$", "-payloads", "32", "-row-time", "5ms", "-no-phases", "-no-verify", "-compare-samples", "0",
			"-threshold", sel, "-threshold-benchtime", "10x", "-out", out}
		if err := run(context.Background(), args, &stdout, &stderr); err != nil {
			t.Fatalf("%q: %v\n%s", sel, err, stderr.String())
		}
		md, err := os.ReadFile(filepath.Join(out, "report.md"))
		if err != nil {
			t.Fatal(err)
		}
		if sel == "^none$" {
			if !strings.Contains(string(md), "**Not measured**") {
				t.Errorf("-threshold %q: the section does not say not measured:\n%s", sel, md)
			}
			continue
		}
		for _, want := range []string{"| same-zone | mem | 1 | 0.5 |", "| same-zone | mem | 10 | 0.5 |", "benchtime of 10x", "](" + report.ThresholdSVG + ")"} {
			if !strings.Contains(string(md), want) {
				t.Errorf("-threshold %q: report lacks %q:\n%s", sel, want, md)
			}
		}
		if !strings.Contains(stderr.String(), "threshold sign/store=mem/net=same-zone/inflight=1") {
			t.Errorf("no progress line for the threshold row:\n%s", stderr.String())
		}
	}
}

func TestHelpListsThresholdFlags(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"-h"}, &stdout, &stderr); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v", err)
	}
	for _, want := range []string{"-threshold regexp", "-no-threshold", "-threshold-benchtime duration", report.DefaultThresholdRows} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("-h lacks %q:\n%s", want, stderr.String())
		}
	}
}

func TestCPUInfo(t *testing.T) {
	for in, want := range map[string]string{
		"processor\t: 0\nmodel name\t: Intel(R)  Xeon(R) Processor\nflags\t\t: fpu sse2 sha_ni avx2\n\nprocessor\t: 1\nmodel name\t: other\n": "Intel(R) Xeon(R) Processor, with SHA-256 instructions, ",
		"processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu sse2 avx2\n":                                                                  "AMD EPYC, no SHA-2 instructions, ",
		"processor\t: 0\nFeatures\t: fp asimd sha1 sha2 sha512\n":                                                                             "with SHA-256 and SHA-512 instructions, ",
		"": "",
	} {
		if got := cpuInfo(in); got != want {
			t.Errorf("cpuInfo(%q) = %q, want %q", in, got, want)
		}
	}
}

// The whole suite's output (go test -bench . ./..., here at one
// iteration a row) makes a report: the benchmarks of packages the report
// does not read (guard's BenchmarkSign/disk once failed it) are left out
// and named. .ci/run feeds the suite's live output to signerbench too.
func TestReportFromWholeSuite(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"-input", "../../internal/report/testdata/suite-1x.txt", "-out", out}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| raw-ed25519 | 128 |", "## Verification"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if !strings.Contains(stderr.String(), "github.com/signerkit/signerkit/guard") || strings.Contains(stderr.String(), thresholdPackage) {
		t.Errorf("the note on other packages does not name guard's, or names thresholdbench's (which the report reads):\n%s", stderr.String())
	}
}
