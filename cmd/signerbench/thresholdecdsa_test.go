package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The CGGMP21 comparator's rows, from its nested module's package, appended
// to the FROST rows' output, fill the threshold ECDSA table's CGGMP21
// column, labelled a comparator; DKLS23's, absent, are marked not
// measured; the note on left-out packages does not name the comparator's.
func TestThresholdECDSAFromBenchOutput(t *testing.T) {
	frost, err := os.ReadFile("../../internal/report/testdata/bench-threshold.txt")
	if err != nil {
		t.Fatal(err)
	}
	const pkg = "github.com/signerkit/signerkit/interop/cggmp21"
	input := string(frost) + "pkg: " + pkg + "\n" +
		"BenchmarkThreshold/cggmp21-2of3-secp256k1/presign-2   2   1400000000 ns/op   2.5 core-s/presig   17853 payload-B/party   0.72 presigs/s\n" +
		"BenchmarkThreshold/cggmp21-2of3-secp256k1/sign/net=same-zone/inflight=1-2   200   4473390 ns/op   2.233 cpu-ms/op   5.498 p50-ms   5.9 p99-ms   0.5 rtt-ms   223.5 signs/s\n" +
		"pkg: github.com/signerkit/signerkit/guard\nBenchmarkAppend-2   100   1000 ns/op\n"
	in := filepath.Join(t.TempDir(), "bench.txt")
	if err := os.WriteFile(in, []byte(input), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"-input", in, "-out", out}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"comparator: taurusgroup multi-party-sig v0.6.0-alpha (2021), lacks later upstream fixes, benchmark only",
		"**DKLS23** (secp256k1), ours: package threshold/dkls23; **not measured**",
		"| presignature CPU (core-s) | – | 2.500 |",
		"| online p50, same-zone, 1 in flight (ms) | – | 5.50 | 1.78 |",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(stderr.String(), pkg) || !strings.Contains(stderr.String(), "signerkit/guard") {
		t.Errorf("the note on left-out packages names the comparator's, or not guard's:\n%s", stderr.String())
	}
	// -no-threshold leaves them out too.
	out = t.TempDir()
	stderr.Reset()
	if err := run(context.Background(), []string{"-input", in, "-out", out, "-no-threshold"}, &stdout, &stderr); err == nil {
		md, _ = os.ReadFile(filepath.Join(out, "report.md"))
		if strings.Contains(string(md), "| – | 2.500 |") {
			t.Errorf("-no-threshold: the comparator's rows are in the report:\n%s", md)
		}
	}
}
