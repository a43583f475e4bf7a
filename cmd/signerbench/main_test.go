package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	args := []string{"-backends", "^inprocess-ed25519$", "-payloads", "32,128", "-row-time", "10ms", "-heights", "8", "-out", out}
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| inprocess-ed25519 | 128 |", "| inprocess-ed25519 | prevote | 108 | 8 |", "| inprocess-ed25519 | proposal | 119 | 1 |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-payloads", "32,x"},
		{"-chunks", "0"},
		{"-sim", "fast"},
		{"-backends", "("},
		{"-input", "/nonexistent/bench.txt"},
		{"stray"},
	} {
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), append(args, "-out", t.TempDir()), &stdout, &stderr); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}

func TestReadmeTable(t *testing.T) {
	dir := t.TempDir()
	readme := filepath.Join(dir, "README.md")
	os.WriteFile(readme, []byte("# x\n\n"+beginMarker+"\nold table\n"+endMarker+"\n\nafter\n"), 0o644)
	var stdout, stderr bytes.Buffer
	args := []string{"-input", "../../internal/report/testdata/bench.txt", "-out", filepath.Join(dir, "r"), "-readme", readme}
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	got, _ := os.ReadFile(readme)
	s := string(got)
	if strings.Contains(s, "old table") || !strings.Contains(s, "| yubihsm-ed25519 | 128 |") || !strings.HasSuffix(s, endMarker+"\n\nafter\n") {
		t.Errorf("README after update:\n%s", s)
	}
	if !strings.Contains(s, "from `go test -bench` output") || strings.Contains(s, "make report") {
		t.Errorf("a table from -input is described as another run's:\n%s", s)
	}
	os.WriteFile(readme, []byte("no markers\n"), 0o644)
	if err := run(context.Background(), args, &stdout, &stderr); err == nil {
		t.Error("a README without markers was accepted")
	}
}
