package thresholdbench

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const sampleRun = `goos: linux
BenchmarkThreshold/frost-2of3-ed25519/sign/store=mem/net=transatlantic/inflight=1-2   	     300	  91000000 ns/op	  1.5 cpu-ms/op	  90.6 p50-ms	  95.0 p99-ms	  90.0 rtt-ms	  11.0 signs/s	  215.0 payload-B/party
BenchmarkThreshold/frost-2of3-ed25519/sign/store=mem/net=transatlantic/inflight=1-2   	     300	  91000000 ns/op	  1.5 cpu-ms/op	  90.9 p50-ms	  99.0 p99-ms	  90.0 rtt-ms	  11.0 signs/s	  215.0 payload-B/party
BenchmarkThreshold/frost-2of3-ed25519/sign/store=mem/net=transatlantic/inflight=1-2   	     300	  91000000 ns/op	  1.5 cpu-ms/op	  91.5 p50-ms	  97.0 p99-ms	  90.0 rtt-ms	  11.0 signs/s	  215.0 payload-B/party
BenchmarkThreshold/frost-2of3-ed25519/sign/store=mem/net=same-zone/inflight=200-2   	    3000	  400000 ns/op	  0.9 cpu-ms/op	  1.6 p50-ms	  9.0 p99-ms	  0.5 rtt-ms	  2500 signs/s
BenchmarkThreshold/frost-2of3-ed25519/presign/commit-2   	  20000	  50000 ns/op	  20000 commitments/s	  19000 commitments/s/core
BenchmarkThreshold/frost-2of3-ed25519/dkg/net=trio-2   	  5	  110000000 ns/op	  109.5 p50-ms	  500 connect-ms
BenchmarkSign/backend=inprocess/payload=32-2   	  100	  30000 ns/op
PASS
`

func TestParseAndRender(t *testing.T) {
	rs, err := ParseResults(strings.NewReader(sampleRun))
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 4 {
		t.Fatalf("%d rows, want 4", len(rs))
	}
	r := rs[0]
	if r.Name != "sign/store=mem/net=transatlantic/inflight=1" || r.Param("net") != "transatlantic" || r.Kind() != "sign" {
		t.Errorf("row %q: net %q, kind %q", r.Name, r.Param("net"), r.Kind())
	}
	if v, _ := r.Get("p50-ms"); v != 90.9 {
		t.Errorf("median p50 %v, want 90.9", v)
	}
	if !slices.Equal(r.Iterations, []int{300, 300, 300}) || !slices.Equal(rs[3].Iterations, []int{5}) {
		t.Errorf("iterations %v and %v, want [300 300 300] and [5]", r.Iterations, rs[3].Iterations)
	}
	var md bytes.Buffer
	if err := WriteTables(&md, rs); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| transatlantic | mem | 1 | 90.0 | – | 90.90 | 97.0 | 11 |", "| frost.Commit alone | 1 | 20000 | 19000 |", "| trio | 109.5 |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("tables lack %q:\n%s", want, md.String())
		}
	}
	if !Charted(rs) || Charted(rs[2:]) {
		t.Errorf("Charted: %v for every row, %v for the presign and dkg rows alone", Charted(rs), Charted(rs[2:]))
	}
	var svg bytes.Buffer
	if err := WriteLatencySVG(&svg, rs); err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(svg.Bytes()))
	for {
		if _, err := d.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v", err)
		}
	}
	for _, want := range []string{`data-series="FROST 2-of-3, 1 in flight"`, `data-series="FROST 2-of-3, 200 in flight"`, "horcrux", "DKLS23", "CGGMP21"} {
		if !strings.Contains(svg.String(), want) {
			t.Errorf("the SVG lacks %q", want)
		}
	}
	if strings.Contains(svg.String(), "nonces synced to a file") {
		t.Error("the legend names a series the run has no row of")
	}
}

// A table without rows is left out, and no rows write nothing.
func TestTablesLeaveOutEmpty(t *testing.T) {
	rs, err := ParseResults(strings.NewReader(sampleRun))
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := WriteTables(&md, rs[:2]); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(md.String(), "Online signing") || strings.Contains(md.String(), "Presigning") ||
		strings.Contains(md.String(), "Compute") || strings.Contains(md.String(), "Key generation") {
		t.Errorf("tables of sign rows alone:\n%s", md.String())
	}
	md.Reset()
	if err := WriteTables(&md, rs[3:]); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(md.String(), "Key generation") || strings.Contains(md.String(), "Online signing") {
		t.Errorf("tables of a dkg row alone:\n%s", md.String())
	}
	md.Reset()
	if err := WriteTables(&md, nil); err != nil || md.Len() != 0 {
		t.Errorf("no rows wrote %q, %v", md.String(), err)
	}
}

// TestRender writes the results page's chart and tables from a saved
// `go test -bench` run: SIGNERKIT_FROST_RESULTS names the run's output,
// SIGNERKIT_FROST_OUT the directory for threshold-latency.svg and
// threshold-tables.md. Without them it is skipped.
func TestRender(t *testing.T) {
	in, out := os.Getenv("SIGNERKIT_FROST_RESULTS"), os.Getenv("SIGNERKIT_FROST_OUT")
	if in == "" || out == "" {
		t.Skip("set SIGNERKIT_FROST_RESULTS and SIGNERKIT_FROST_OUT to render a run")
	}
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rs, err := ParseResults(f)
	if err != nil {
		t.Fatal(err)
	}
	var svg, md bytes.Buffer
	if err := WriteLatencySVG(&svg, rs); err != nil {
		t.Fatal(err)
	}
	if err := WriteTables(&md, rs); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "threshold-latency.svg"), svg.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "threshold-tables.md"), md.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
