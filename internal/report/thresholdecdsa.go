package report

import (
	"bufio"
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/signerkit/signerkit/internal/thresholdbench"
)

// ECDSAScheme is a threshold ECDSA signer whose BenchmarkThreshold rows
// the report puts beside FROST's: Row is their prefix, Label what the
// report says of where they come from.
type ECDSAScheme struct {
	Name, Row, Label string
	// Canon, when not nil, adds the rows the tables read (below) that the
	// scheme's benchmarks name or measure otherwise, derived from its own.
	Canon func([]thresholdbench.Result) []thresholdbench.Result
}

// ECDSASchemes are the threshold ECDSA columns of the report, in order.
// Their rows are read from `go test -bench` output whatever its package
// (make bench-threshold-ecdsa gathers them). The tables read, below
// BenchmarkThreshold/<Row>/:
//
//	keygen                               ns/op, cpu-ms/op, payload-B/op
//	presign                              core-s/presig, presigs/s, payload-B/party
//	sign/net=<profile>/inflight=<n>      p50-ms, signs/s, rtt-ms, cpu-ms/op, payload-, tls-, wire-B/party
//	compute/party-share                  cpu-µs/op
//
// and leave a dash where a row or unit is missing.
var ECDSASchemes = []ECDSAScheme{
	{"DKLS23", "dkls23-2of3-secp256k1", "ours: package threshold/dkls23", dklsCanon},
	{"CGGMP21", "cggmp21-2of3-secp256k1",
		"comparator: taurusgroup multi-party-sig v0.6.0-alpha (2021), lacks later upstream fixes, benchmark only (interop/cggmp21)", nil},
}

// ParseThresholdECDSA returns the rows of each ECDSAScheme in data, `go
// test -bench` output of any packages, by Row; a scheme without rows has
// no entry. pkgs are the packages (as `pkg:` lines name them) the rows
// came from.
func ParseThresholdECDSA(data []byte) (rows map[string][]thresholdbench.Result, pkgs map[string]bool, err error) {
	rows, pkgs = map[string][]thresholdbench.Result{}, map[string]bool{}
	for _, s := range ECDSASchemes {
		rs, err := thresholdbench.ParseRow(bytes.NewReader(data), s.Row)
		if err != nil {
			return nil, nil, fmt.Errorf("%s rows: %w", s.Name, err)
		}
		if len(rs) > 0 && s.Canon != nil {
			rs = s.Canon(rs)
		}
		if len(rs) > 0 {
			rows[s.Row] = rs
		}
	}
	pkg := ""
	for line := range bytes.Lines(data) {
		line = bytes.TrimSpace(line)
		if p, ok := bytes.CutPrefix(line, []byte("pkg:")); ok {
			pkg = string(bytes.TrimSpace(p))
			continue
		}
		for _, s := range ECDSASchemes {
			if bytes.HasPrefix(line, []byte("BenchmarkThreshold/"+s.Row+"/")) && pkg != "" {
				pkgs[pkg] = true
			}
		}
	}
	return rows, pkgs, nil
}

// dklsCanon derives the rows the tables read from package dklsbench's:
// keygen from keygen/inprocess (its payload per party, times the three
// parties); presign from presign/inprocess (CPU of both parties, payload
// per party) and presign/parallel (the sustained rate); a signer's share
// from compute/steps's sign-share-µs.
func dklsCanon(rs []thresholdbench.Result) []thresholdbench.Result {
	derive := func(name string, from map[string]struct {
		row, unit string
		scale     float64
	}) {
		if _, ok := named(rs, name); ok {
			return
		}
		out := thresholdbench.Result{Name: name, Samples: map[string][]float64{}}
		for unit, f := range from {
			r, ok := named(rs, f.row)
			if !ok {
				continue
			}
			for _, v := range r.Samples[f.unit] {
				out.Samples[unit] = append(out.Samples[unit], v*f.scale)
			}
		}
		if len(out.Samples) > 0 {
			rs = append(rs, out)
		}
	}
	type src = struct {
		row, unit string
		scale     float64
	}
	derive("keygen", map[string]src{
		"ns/op": {"keygen/inprocess", "ns/op", 1}, "cpu-ms/op": {"keygen/inprocess", "cpu-ms/op", 1},
		"payload-B/op": {"keygen/inprocess", "payload-B/party", 3},
	})
	derive("presign", map[string]src{
		"core-s/presig": {"presign/inprocess", "cpu-ms/op", 1e-3}, "payload-B/party": {"presign/inprocess", "payload-B/party", 1},
		"presigs/s": {"presign/parallel", "presigns/s", 1},
	})
	derive("compute/party-share", map[string]src{"cpu-µs/op": {"compute/steps", "sign-share-µs", 1}})
	return rs
}

// ecdsaPublished are the published figures of DKLS23 and CGGMP21 (2-of-3,
// n2d-standard-16), as ThresholdReferences and docs/latency-profiles.md
// give them, by measure. Their bytes are all parties' together, one way.
var ecdsaPublished = map[string][2]string{
	"presign-cpu":   {"0.11", "3.0"},
	"presign-bytes": {"120 KiB, all parties", "88 KiB, all parties"},
	"presign-rate":  {"316 (32 vCPUs)", "10.7"},
	"online-p50":    {"~7.5", "~26"},
	"online-bytes":  {"4.4 KB, all parties", "4–7 KB, all parties"},
}

// ecdsaMeasure is a row of the summary table: how to read it from a
// scheme's rows (FROST's named otherwise) and the published key.
type ecdsaMeasure struct {
	what, published string
	cell            func(rs []thresholdbench.Result, frost bool) string
}

// named returns the row called name.
func named(rs []thresholdbench.Result, name string) (thresholdbench.Result, bool) {
	i := slices.IndexFunc(rs, func(r thresholdbench.Result) bool { return r.Name == name })
	if i < 0 {
		return thresholdbench.Result{}, false
	}
	return rs[i], true
}

// signRow returns the sign row at net and inflight, FROST's with its
// nonces in memory.
func signRow(rs []thresholdbench.Result, net, inflight string) (thresholdbench.Result, bool) {
	i := slices.IndexFunc(rs, func(r thresholdbench.Result) bool {
		return r.Kind() == "sign" && r.Param("net") == net && r.Param("inflight") == inflight && (r.Param("store") == "" || r.Param("store") == "mem")
	})
	if i < 0 {
		return thresholdbench.Result{}, false
	}
	return rs[i], true
}

// value formats unit of r, times scale, or "–".
func value(r thresholdbench.Result, ok bool, unit string, scale float64, decimals int) string {
	if !ok {
		return "–"
	}
	v, ok := r.Get(unit)
	if !ok {
		return "–"
	}
	return strconv.FormatFloat(v*scale, 'f', decimals, 64)
}

// inverse formats 1/unit of r, or "–".
func inverse(r thresholdbench.Result, ok bool, unit string, decimals int) string {
	v, has := r.Get(unit)
	if !ok || !has || v == 0 {
		return "–"
	}
	return strconv.FormatFloat(1/v, 'f', decimals, 64)
}

// atSameZone reads unit of the sign row at one sign in flight on the
// same-zone profile.
func atSameZone(unit string, decimals int) func([]thresholdbench.Result, bool) string {
	return func(rs []thresholdbench.Result, _ bool) string {
		r, ok := signRow(rs, "same-zone", "1")
		return value(r, ok, unit, 1, decimals)
	}
}

// ecdsaMeasures are the summary table's rows. FROST's key generation is
// its in-process DKG; its presignature is one party's nonce commitment
// (frost.Commit), and its presigning rate and bytes those of the
// networked presign row.
var ecdsaMeasures = []ecdsaMeasure{
	{"key generation, wall clock (ms)", "", func(rs []thresholdbench.Result, frost bool) string {
		if frost {
			r, ok := named(rs, "dkg/inprocess")
			return value(r, ok, "ns/op", 1e-6, 2)
		}
		r, ok := named(rs, "keygen")
		return value(r, ok, "ns/op", 1e-6, 0)
	}},
	{"key generation CPU, all parties (core-ms)", "", func(rs []thresholdbench.Result, frost bool) string {
		r, ok := named(rs, map[bool]string{true: "dkg/inprocess", false: "keygen"}[frost])
		return value(r, ok, "cpu-ms/op", 1, 2)
	}},
	{"key generation payload, all parties (B)", "", func(rs []thresholdbench.Result, frost bool) string {
		r, ok := named(rs, map[bool]string{true: "dkg/net=same-zone", false: "keygen"}[frost])
		return value(r, ok, "payload-B/op", 1, 0)
	}},
	{"presignature CPU (core-s)", "presign-cpu", func(rs []thresholdbench.Result, frost bool) string {
		if frost {
			r, ok := named(rs, "presign/commit")
			return inverse(r, ok, "commitments/s/core", 6)
		}
		r, ok := named(rs, "presign")
		return value(r, ok, "core-s/presig", 1, 3)
	}},
	{"presignature payload (B/party)", "presign-bytes", func(rs []thresholdbench.Result, frost bool) string {
		if frost {
			r, ok := named(rs, "presign/net=same-zone/batch=1024")
			return value(r, ok, "payload-B/commitment", 1, 1)
		}
		r, ok := named(rs, "presign")
		return value(r, ok, "payload-B/party", 1, 0)
	}},
	{"presignatures/s, sustained", "presign-rate", func(rs []thresholdbench.Result, frost bool) string {
		if frost {
			r, ok := named(rs, "presign/net=same-zone/batch=1024")
			return value(r, ok, "commitments/s", 1, 0)
		}
		r, ok := named(rs, "presign")
		return value(r, ok, "presigs/s", 1, 2)
	}},
	{"online p50, same-zone, 1 in flight (ms)", "online-p50", atSameZone("p50-ms", 2)},
	{"online CPU, same-zone, 1 in flight (ms/sign)", "", atSameZone("cpu-ms/op", 2)},
	{"a signer's share, CPU on one goroutine (µs)", "", func(rs []thresholdbench.Result, _ bool) string {
		r, ok := named(rs, "compute/party-share")
		return value(r, ok, "cpu-µs/op", 1, 1)
	}},
	{"online payload (B/party)", "online-bytes", atSameZone("payload-B/party", 0)},
	{"online TLS (B/party)", "", atSameZone("tls-B/party", 0)},
	{"online wire (B/party)", "", atSameZone("wire-B/party", 0)},
}

// ecdsaColumn is a column of the tables: a scheme's name and rows.
type ecdsaColumn struct {
	name  string
	rows  []thresholdbench.Result
	frost bool
}

// writeThresholdECDSA writes the section putting the threshold ECDSA
// signers' rows beside FROST's, each scheme labelled, a scheme without
// rows marked not measured, and the published figures in columns of
// their own.
func (r *Report) writeThresholdECDSA(bw *bufio.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }
	p("## Threshold ECDSA beside FROST (2-of-3)\n\n")
	p("Three 2-of-3 threshold signers measured on this host in the same shape (`BenchmarkThreshold/<scheme>/…`: key generation, presigning, online signing on netshape's profiles, payload, TLS and wire bytes, CPU); `make bench-threshold-ecdsa` gathers their rows into one input. The columns:\n\n")
	cols := []ecdsaColumn{}
	for _, s := range ECDSASchemes {
		rs := r.ThresholdECDSA[s.Row]
		state := fmt.Sprintf("%d rows", len(rs))
		if len(rs) == 0 {
			state = "**not measured** in this report (no `BenchmarkThreshold/" + s.Row + "/…` rows in the input)"
		}
		p("- **%s** (secp256k1), %s; %s.\n", s.Name, s.Label, state)
		cols = append(cols, ecdsaColumn{s.Name, rs, false})
	}
	state := fmt.Sprintf("%d rows", len(r.Threshold))
	if len(r.Threshold) == 0 {
		state = "**not measured** in this report"
	}
	p("- **FROST** (Ed25519), ours: package threshold, the rows of the section above; %s. Threshold Schnorr needs no multiplication of secret shares, so it is the floor the ECDSA schemes are measured against. Its key generation is the in-process DKG (its bytes the same-zone networked one's), its presignature one party's nonce commitment.\n\n", state)
	cols = append(cols, ecdsaColumn{"FROST", r.Threshold, true})
	p("The last two columns are published figures (n2d-standard-16), not our measurements; their bytes are all parties' together, one way, where ours are per party (both directions over the parties taking part), so twice ours is theirs.\n\n")
	p("| measure |")
	for _, c := range cols {
		p(" %s |", c.name)
	}
	p(" DKLS23, published | CGGMP21, published |\n|---|")
	p("%s", strings.Repeat("--:|", len(cols)+2))
	p("\n")
	for _, m := range ecdsaMeasures {
		p("| %s |", m.what)
		for _, c := range cols {
			p(" %s |", m.cell(c.rows, c.frost))
		}
		pub := [2]string{"–", "–"}
		if v, ok := ecdsaPublished[m.published]; ok {
			pub = v
		}
		p(" %s | %s |\n", pub[0], pub[1])
	}
	p("\n")
	writeECDSAOnline(p, cols)
}

// writeECDSAOnline writes online signing at every profile and load any
// column has: p50 and signs/s of each.
func writeECDSAOnline(p func(string, ...any), cols []ecdsaColumn) {
	type key struct{ net, inflight string }
	var keys []key
	rtt := map[key]string{}
	for _, c := range cols {
		for _, r := range c.rows {
			k := key{r.Param("net"), r.Param("inflight")}
			if r.Kind() != "sign" || k.net == "" || slices.Contains(keys, k) {
				continue
			}
			keys = append(keys, k)
			rtt[k] = value(r, true, "rtt-ms", 1, 1)
		}
	}
	if len(keys) == 0 {
		return
	}
	p("Online signing, p50 (ms) and signs/s, on each profile and load. RTT is the round trip a sign cannot do without: for FROST the coordinator's to the second-nearest party, for the ECDSA schemes the one between the two signers (the request reaches the first signer with no delay):\n\n")
	p("| network | in flight | RTT (ms) |")
	for _, c := range cols {
		p(" %s p50 | %s signs/s |", c.name, c.name)
	}
	p("\n|---|--:|--:|%s\n", strings.Repeat("--:|--:|", len(cols)))
	for _, k := range keys {
		p("| %s | %s | %s |", k.net, k.inflight, rtt[k])
		for _, c := range cols {
			r, ok := signRow(c.rows, k.net, k.inflight)
			p(" %s | %s |", value(r, ok, "p50-ms", 1, 2), value(r, ok, "signs/s", 1, 0))
		}
		p("\n")
	}
	p("\n")
}
