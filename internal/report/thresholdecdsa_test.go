package report

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// ecdsaBench is synthetic `go test -bench` output of the threshold ECDSA
// rows, as make bench-threshold-ecdsa gathers them: CGGMP21's from its
// nested module, DKLS23's from package threshold/dkls23 (run twice).
const ecdsaBench = `pkg: github.com/signerkit/signerkit/threshold/dkls23
BenchmarkThreshold/dkls23-2of3-secp256k1/keygen-2   1   120000000 ns/op   150.0 cpu-ms/op   40000 payload-B/op   41000 tls-B/op   43000 wire-B/op
BenchmarkThreshold/dkls23-2of3-secp256k1/presign-2   100   9000000 ns/op   0.040 core-s/presig   51000 payload-B/party   52000 tls-B/party   54000 wire-B/party   210.0 presigs/s
BenchmarkThreshold/dkls23-2of3-secp256k1/sign/net=same-zone/inflight=1-2   300   2000000 ns/op   0.40 cpu-ms/op   1.40 p50-ms   3.0 p99-ms   0.5 rtt-ms   500 signs/s   300 payload-B/party   360 tls-B/party   450 wire-B/party
BenchmarkThreshold/dkls23-2of3-secp256k1/sign/net=same-zone/inflight=1-2   300   2000000 ns/op   0.40 cpu-ms/op   1.60 p50-ms   3.0 p99-ms   0.5 rtt-ms   500 signs/s   300 payload-B/party   360 tls-B/party   450 wire-B/party
pkg: github.com/signerkit/signerkit/interop/cggmp21
BenchmarkThreshold/cggmp21-2of3-secp256k1/keygen-2   1   31000000000 ns/op   33000 cpu-ms/op   90000 payload-B/op   95000 tls-B/op   99000 wire-B/op
BenchmarkThreshold/cggmp21-2of3-secp256k1/presign-2   2   1400000000 ns/op   2.036 core-s/presig   17853 payload-B/party   18212 tls-B/party   19122 wire-B/party   0.7220 presigs/s
BenchmarkThreshold/cggmp21-2of3-secp256k1/sign/net=same-zone/inflight=1-2   200   4473390 ns/op   2.233 cpu-ms/op   5.498 p50-ms   5.9 p99-ms   224.0 payload-B/party   0.5000 rtt-ms   223.5 signs/s   276.5 tls-B/party   354.5 wire-B/party
BenchmarkThreshold/cggmp21-2of3-secp256k1/compute/party-share-2   100000   17699 ns/op   18.09 cpu-µs/op
BenchmarkThreshold/cggmp21-2of3-secp256k1/sign/net=trio/inflight=50-2   200   4473390 ns/op   2.1 cpu-ms/op   41.5 p50-ms   60 p99-ms   224.0 payload-B/party   32.5 rtt-ms   600 signs/s   276.5 tls-B/party   354.5 wire-B/party
`

// ecdsaSection returns the report's threshold ECDSA section.
func ecdsaSection(t *testing.T, rep *Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := rep.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	_, s, ok := strings.Cut(b.String(), "## Threshold ECDSA beside FROST (2-of-3)\n")
	if !ok {
		t.Fatalf("no threshold ECDSA section:\n%s", b.String())
	}
	s, _, _ = strings.Cut(s, "\n## ")
	return s
}

func TestThresholdECDSARows(t *testing.T) {
	rows, pkgs, err := ParseThresholdECDSA([]byte(ecdsaBench))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows["dkls23-2of3-secp256k1"]) != 3 || len(rows["cggmp21-2of3-secp256k1"]) != 5 {
		t.Fatalf("rows %v", rows)
	}
	if !pkgs["github.com/signerkit/signerkit/interop/cggmp21"] || !pkgs["github.com/signerkit/signerkit/threshold/dkls23"] || len(pkgs) != 2 {
		t.Fatalf("packages %v", pkgs)
	}
	s := ecdsaSection(t, &Report{Threshold: thresholdFixture(t), ThresholdECDSA: rows})
	for _, want := range []string{
		"comparator: taurusgroup multi-party-sig v0.6.0-alpha (2021), lacks later upstream fixes, benchmark only",
		"| measure | DKLS23 | CGGMP21 | FROST | DKLS23, published | CGGMP21, published |",
		"| key generation, wall clock (ms) | 120 | 31000 | 4.79 | – | – |",
		"| key generation payload, all parties (B) | 40000 | 90000 | – | – | – |",
		"| presignature CPU (core-s) | 0.040 | 2.036 | 0.000047 | 0.11 | 3.0 |",
		"| presignatures/s, sustained | 210.00 | 0.72 | – | 316 (32 vCPUs) | 10.7 |",
		// DKLS23's median of its two runs; FROST's from the fixture.
		"| online p50, same-zone, 1 in flight (ms) | 1.50 | 5.50 | 1.78 | ~7.5 | ~26 |",
		"| online wire (B/party) | 450 | 354 | 380 | – | – |",
		"| a signer's share, CPU on one goroutine (µs) | – | 18.1 | 254.0 | – | – |",
		"| trio | 50 | 32.5 | – | – | 41.50 | 600 | – | – |",
		"| transatlantic | 200 | 90.0 | – | – | – | – | 783.20 | 239 |",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("section lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "not measured") {
		t.Errorf("a scheme with rows is said not measured:\n%s", s)
	}
}

// Without DKLS23's rows (its package not yet there) the column is
// marked not measured and filled with dashes; with no rows at all the
// section still says so.
func TestThresholdECDSAAbsent(t *testing.T) {
	var cggmp strings.Builder
	for line := range strings.Lines(ecdsaBench) {
		if !strings.Contains(line, "dkls23") {
			cggmp.WriteString(line)
		}
	}
	rows, _, err := ParseThresholdECDSA([]byte(cggmp.String()))
	if err != nil {
		t.Fatal(err)
	}
	s := ecdsaSection(t, &Report{ThresholdECDSA: rows})
	for _, want := range []string{
		"**DKLS23** (secp256k1), ours: package threshold/dkls23; **not measured** in this report",
		"**FROST** (Ed25519), ours: package threshold, the rows of the section above; **not measured**",
		"| online p50, same-zone, 1 in flight (ms) | – | 5.50 | – | ~7.5 | ~26 |",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("section lacks %q:\n%s", want, s)
		}
	}
	s = ecdsaSection(t, &Report{})
	if strings.Count(s, "**not measured**") != 3 || strings.Contains(s, "| network | in flight |") {
		t.Errorf("with no rows: want three schemes not measured and no online table:\n%s", s)
	}
}

// TestThresholdECDSADKLSRowNames: package dklsbench's rows, as it names
// and measures them, fill the DKLS23 column through dklsCanon.
func TestThresholdECDSADKLSRowNames(t *testing.T) {
	const in = `pkg: github.com/signerkit/signerkit/internal/dklsbench
BenchmarkThreshold/dkls23-2of3-secp256k1/presign/inprocess-2 	 129	 9036250 ns/op	 7.568 cpu-ms/op	 3.784 cpu-ms/party	 50139 payload-B/party
BenchmarkThreshold/dkls23-2of3-secp256k1/presign/parallel-2 	 1	 5740046 ns/op	 174.4 presigns/s
BenchmarkThreshold/dkls23-2of3-secp256k1/compute/steps-2 	 1	 6804878 ns/op	 203.5 combine-µs	 1180 presign-finish-µs	 0.7080 sign-share-µs
BenchmarkThreshold/dkls23-2of3-secp256k1/keygen/inprocess-2 	 1	 316894298 ns/op	 308.9 cpu-ms/op	 9178 payload-B/party
`
	rows, _, err := ParseThresholdECDSA([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	rs := rows["dkls23-2of3-secp256k1"]
	for _, c := range []struct {
		row, unit string
		want      float64
	}{
		{"keygen", "payload-B/op", 3 * 9178},
		{"keygen", "cpu-ms/op", 308.9},
		{"presign", "core-s/presig", 0.007568},
		{"presign", "payload-B/party", 50139},
		{"presign", "presigs/s", 174.4},
		{"compute/party-share", "cpu-µs/op", 0.708},
	} {
		r, ok := named(rs, c.row)
		v, has := r.Get(c.unit)
		if !ok || !has || math.Abs(v-c.want) > 1e-9*max(1, c.want) {
			t.Errorf("%s %s = %v (row %v, unit %v), want %v", c.row, c.unit, v, ok, has, c.want)
		}
	}
}
