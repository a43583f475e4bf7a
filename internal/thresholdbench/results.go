package thresholdbench

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Result is one row of a `go test -bench` run of BenchmarkThreshold, its
// values gathered over the runs of -count.
type Result struct {
	// Name is the row's name below the Row prefix:
	// "sign/store=mem/net=transatlantic/inflight=1".
	Name    string
	Samples map[string][]float64 // by unit, one value per run
	// Iterations is b.N of each run: signs made, for a sign row.
	Iterations []int
}

// Get returns the median of the unit's values, and whether the row has it.
func (r Result) Get(unit string) (float64, bool) {
	v := slices.Clone(r.Samples[unit])
	if len(v) == 0 {
		return 0, false
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2], true
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2, true
}

// Param returns the value of the name's key=value element, or "".
func (r Result) Param(key string) string {
	for _, e := range strings.Split(r.Name, "/") {
		if k, v, ok := strings.Cut(e, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// Kind returns the name's first element: sign, presign or dkg.
func (r Result) Kind() string {
	k, _, _ := strings.Cut(r.Name, "/")
	return k
}

// ParseResults reads `go test -bench` output and returns the rows of
// BenchmarkThreshold in the order first seen; other lines are skipped.
func ParseResults(r io.Reader) ([]Result, error) { return ParseRow(r, Row) }

// ParseRow is ParseResults for the rows of BenchmarkThreshold/<row>/…,
// such as the threshold ECDSA rows of other packages, named as ours.
func ParseRow(r io.Reader, row string) ([]Result, error) {
	resultLine := regexp.MustCompile(`^BenchmarkThreshold/` + regexp.QuoteMeta(row) + `/(\S+?)(?:-\d+)?\s+(\d+)\s+(.+)$`)
	var out []Result
	index := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		m := resultLine.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		f := strings.Fields(m[3])
		if len(f)%2 != 0 {
			return nil, fmt.Errorf("thresholdbench: line %d: odd number of value/unit fields", line)
		}
		i, ok := index[m[1]]
		if !ok {
			i = len(out)
			index[m[1]] = i
			out = append(out, Result{Name: m[1], Samples: map[string][]float64{}})
		}
		n, err := strconv.Atoi(m[2])
		if err != nil {
			return nil, fmt.Errorf("thresholdbench: line %d: iterations %q: %w", line, m[2], err)
		}
		out[i].Iterations = append(out[i].Iterations, n)
		for j := 0; j < len(f); j += 2 {
			v, err := strconv.ParseFloat(f[j], 64)
			if err != nil {
				return nil, fmt.Errorf("thresholdbench: line %d: %q: %w", line, f[j], err)
			}
			out[i].Samples[f[j+1]] = append(out[i].Samples[f[j+1]], v)
		}
	}
	return out, sc.Err()
}

// cell formats the median of unit in r with the given number of
// decimals, or "–".
func cell(r Result, unit string, decimals int) string {
	v, ok := r.Get(unit)
	if !ok {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', decimals, 64)
}

// WriteTables writes the results as Markdown tables: online signing,
// presigning, compute per step and key generation, each value the median
// of the runs. A table with no rows in results is left out, and with no
// rows at all nothing is written.
func WriteTables(w io.Writer, results []Result) error {
	bw := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }
	echo := map[string]Result{}
	kinds := map[string]bool{}
	for _, r := range results {
		kinds[r.Kind()] = true
		if r.Kind() == "echo" {
			echo[r.Param("net")] = r
		}
	}
	// sep separates a table from the one before it.
	sep := ""
	if kinds["sign"] {
		sep = "\n"
		writeSignTable(p, results, echo)
	}
	if kinds["presign"] {
		p("%s", sep)
		sep = "\n"
		writePresignTable(p, results)
	}
	if kinds["compute"] {
		p("%s", sep)
		sep = "\n"
		writeComputeTable(p, results)
	}
	if kinds["dkg"] {
		p("%s", sep)
		writeDKGTable(p, results)
	}
	return bw.Flush()
}

func writeSignTable(p func(string, ...any), results []Result, echo map[string]Result) {
	p("Online signing, one 108-byte prevote per sign, two parties per signature; echo is a plain TCP request and answer on the same shaped link, one at a time:\n\n")
	p("| network | nonces | in flight | RTT (ms) | echo p50 (ms) | p50 (ms) | p99 (ms) | signs/s | CPU (ms/sign) | shares/sign | payload (B/party) | protocol fields (B/party) | TLS (B/party) | wire (B/party) |\n")
	p("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range results {
		if r.Kind() != "sign" {
			continue
		}
		e := "–"
		if er, ok := echo[r.Param("net")]; ok {
			e = cell(er, "p50-ms", 2)
		}
		p("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Param("net"), r.Param("store"), r.Param("inflight"),
			cell(r, "rtt-ms", 1), e, cell(r, "p50-ms", 2), cell(r, "p99-ms", 1), cell(r, "signs/s", 0), cell(r, "cpu-ms/op", 2),
			cell(r, "shares/op", 2), cell(r, "payload-B/party", 0), cell(r, "proto-B/party", 0), cell(r, "tls-B/party", 0), cell(r, "wire-B/party", 0))
	}
}

func writePresignTable(p func(string, ...any), results []Result) {
	p("Presigning (nonce pairs and their commitments):\n\n")
	p("| row | batch | commitments/s | commitments/s per core | payload (B/commitment) | TLS (B/commitment) |\n")
	p("|---|--:|--:|--:|--:|--:|\n")
	for _, r := range results {
		if r.Kind() != "presign" {
			continue
		}
		what := "frost.Commit alone"
		switch {
		case r.Param("net") != "":
			what = "over the network (" + r.Param("net") + ")"
		case r.Param("store") == "mem":
			what = "party's nonce store, in memory"
		case r.Param("store") == "dir":
			what = "party's nonce store, file + fdatasync"
		}
		batch := r.Param("batch")
		if batch == "" {
			batch = "1"
		}
		p("| %s | %s | %s | %s | %s | %s |\n", what, batch, cell(r, "commitments/s", 0), cell(r, "commitments/s/core", 0),
			cell(r, "payload-B/commitment", 1), cell(r, "tls-B/commitment", 1))
	}
}

func writeComputeTable(p func(string, ...any), results []Result) {
	p("Compute per step, one goroutine, no network or TLS:\n\n")
	p("| step | CPU (µs) | wall clock (µs) |\n|---|--:|--:|\n")
	for _, r := range results {
		if r.Kind() != "compute" {
			continue
		}
		wall := "–"
		if v, ok := r.Get("ns/op"); ok {
			wall = strconv.FormatFloat(v/1e3, 'f', 1, 64)
		}
		p("| %s | %s | %s |\n", strings.TrimPrefix(r.Name, "compute/"), cell(r, "cpu-µs/op", 1), wall)
	}
}

func writeDKGTable(p func(string, ...any), results []Result) {
	p("Key generation (2-of-3 DKG with proofs of knowledge):\n\n")
	p("| row | p50 (ms) | p99 (ms) | connect (ms) | CPU (ms, all parties) | payload (B) | TLS (B) | wire (B) |\n")
	p("|---|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range results {
		if r.Kind() != "dkg" {
			continue
		}
		what := "in process"
		p50 := cell(r, "p50-ms", 1)
		if n := r.Param("net"); n != "" {
			what = n
		} else if v, ok := r.Get("ns/op"); ok {
			p50 = strconv.FormatFloat(v/1e6, 'f', 2, 64) + " (mean)"
		}
		p("| %s | %s | %s | %s | %s | %s | %s | %s |\n", what, p50, cell(r, "p99-ms", 1), cell(r, "connect-ms", 0),
			cell(r, "cpu-ms/op", 2), cell(r, "payload-B/op", 0), cell(r, "tls-B/op", 0), cell(r, "wire-B/op", 0))
	}
}
