package report

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/signerkit/signerkit/signer/signertrace"
)

var benchLine = regexp.MustCompile(`^Benchmark(\S+?)(?:-\d+)?\s+(\d+)\s+(.+)$`)

// isStage reports whether name is a signer stage's, as <name>-ms/op
// metrics carry it.
func isStage(name string) bool {
	return slices.ContainsFunc(signertrace.Stages(), func(s signertrace.Stage) bool { return s.String() == name })
}

// RegistryPackage is the package whose BenchmarkSign and BenchmarkVerify
// rows the report reads: the module's root, where the benchmark registry
// runs. Other packages have benchmarks of those names too (guard's
// BenchmarkSign/disk, threshold's, ed25519sign's), with other levels.
const RegistryPackage = "github.com/signerkit/signerkit"

// ParseBench reads `go test -bench` output and returns a row per
// BenchmarkSign/backend=…/payload=…[/chunk=…] benchmark, in the order
// first seen. Lines of other benchmarks and non-benchmark lines are
// skipped; a row run several times (-count) is averaged. It fails on a
// BenchmarkSign line it cannot read, so a truncated file is not mistaken
// for a short one.
//
// The output may be a whole suite's (go test -bench . ./...): a line
// belongs to the package of the `pkg:` line above it, and the benchmarks
// of packages other than RegistryPackage are skipped (ParseBenchSuite
// counts them). Lines above any `pkg:` line are taken as the registry's.
func ParseBench(r io.Reader) ([]Row, error) {
	sign, _, err := ParseBenchOutput(r)
	return sign, err
}

// ParseBenchOutput is ParseBench that also returns a row per
// BenchmarkVerify/alg=…/payload=… benchmark, Backend naming the case.
func ParseBenchOutput(r io.Reader) (sign, verify []Row, err error) {
	out, err := ParseBenchSuite(r)
	if err != nil {
		return nil, nil, err
	}
	return out.Sign, out.Verify, nil
}

// BenchOutput is what ParseBenchSuite reads from `go test -bench` output.
type BenchOutput struct {
	Sign, Verify []Row
	// Other counts the benchmark lines of the packages the report does
	// not read, by import path, as the `pkg:` lines name them.
	Other map[string]int
}

// ParseBenchSuite is ParseBenchOutput that also counts the benchmark
// lines it skipped as other packages'.
func ParseBenchSuite(r io.Reader) (*BenchOutput, error) {
	var order []string
	rows := map[string]*benchRuns{}
	verifies := map[string]bool{}
	out := &BenchOutput{Other: map[string]int{}}
	pkg := "" // the package of the lines that follow; "" before any pkg: line
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := strings.TrimSpace(sc.Text())
		if p, ok := strings.CutPrefix(line, "pkg:"); ok {
			pkg = strings.TrimSpace(p)
			continue
		}
		m := benchLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if pkg != "" && pkg != RegistryPackage {
			out.Other[pkg]++
			continue
		}
		isVerify := strings.HasPrefix(m[1], "Verify/")
		if !isVerify && !strings.HasPrefix(m[1], "Sign/") {
			continue
		}
		where := fmt.Sprintf("line %d", lineNo)
		if pkg != "" {
			where += " (" + pkg + ")"
		}
		row, err := parseName(m[1])
		if err != nil {
			return nil, fmt.Errorf("report: %s: %w", where, err)
		}
		fields := strings.Fields(m[3])
		if len(fields)%2 != 0 {
			return nil, fmt.Errorf("report: %s: odd number of value/unit fields", where)
		}
		key := row.Path() + "/" + strconv.Itoa(row.Payload)
		if isVerify {
			key = "verify " + key
			verifies[key] = true
		}
		a := rows[key]
		if a == nil {
			a = &benchRuns{row: row, values: map[string]float64{}}
			rows[key] = a
			order = append(order, key)
		}
		if err := a.add(fields); err != nil {
			return nil, fmt.Errorf("report: %s: %w", where, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	for _, key := range order {
		if verifies[key] {
			out.Verify = append(out.Verify, rows[key].mean())
		} else {
			out.Sign = append(out.Sign, rows[key].mean())
		}
	}
	return out, nil
}

// benchRuns sums the runs (-count) of one benchmark: its values by unit,
// with the units in the order first seen.
type benchRuns struct {
	row    Row
	runs   int
	values map[string]float64
	order  []string
}

// add adds one run, its value/unit fields.
func (a *benchRuns) add(fields []string) error {
	a.runs++
	for i := 0; i < len(fields); i += 2 {
		v, err := strconv.ParseFloat(fields[i], 64)
		if err != nil {
			return fmt.Errorf("value %q: %w", fields[i], err)
		}
		unit := fields[i+1]
		if _, ok := a.values[unit]; !ok {
			a.order = append(a.order, unit)
		}
		a.values[unit] += v
	}
	return nil
}

// get returns unit's mean over the runs, and whether the benchmark
// reported it.
func (a *benchRuns) get(unit string) (float64, bool) {
	v, ok := a.values[unit]
	return v / float64(a.runs), ok
}

// mean returns the benchmark's row from the means of its runs: host
// time, end to end (host time when not reported), modeled time, the
// stages (<stage>-ms/op, <stage>-modeled-ms/op) and the other
// per-operation counters.
func (a *benchRuns) mean() Row {
	row := a.row
	row.Source = "bench"
	if v, ok := a.get("ns/op"); ok {
		row.HostMs = v / 1e6
	}
	if v, ok := a.get("e2e-ms/op"); ok {
		row.E2E.Avg = v
	} else {
		row.E2E.Avg = row.HostMs
	}
	row.ModeledMs, _ = a.get("modeled-ms/op")
	for _, unit := range a.order {
		name, ok := strings.CutSuffix(unit, "-ms/op")
		if ok && isStage(name) {
			ms, _ := a.get(unit)
			mod, _ := a.get(name + "-modeled-ms/op")
			row.Stages = append(row.Stages, Stage{Name: name, Ms: ms, ModeledMs: mod})
			continue
		}
		if ok {
			continue // e2e, modeled, <stage>-modeled
		}
		if name, ok := strings.CutSuffix(unit, "/op"); ok && name != "ns" && name != "B" && name != "allocs" {
			v, _ := a.get(unit)
			row.Counters = append(row.Counters, Counter{Name: name, PerOp: v})
		}
	}
	return row
}

// PackageLines returns the lines of `go test -bench` output that belong
// to package pkg (below its `pkg:` line, up to the next one) or to no
// package (above any `pkg:` line), for a reader of one package's
// benchmarks.
func PackageLines(data []byte, pkg string) []byte {
	var out []byte
	cur := ""
	for line := range bytes.Lines(data) {
		if p, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("pkg:")); ok {
			cur = string(bytes.TrimSpace(p))
			continue
		}
		if cur == "" || cur == pkg {
			out = append(out, line...)
		}
	}
	return out
}

// parseName reads "Sign/backend=x/payload=n[/chunk=c]" and
// "Verify/alg=x/payload=n".
func parseName(name string) (Row, error) {
	var row Row
	parts := strings.Split(name, "/")
	for _, part := range parts[1:] {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return row, fmt.Errorf("benchmark %q: level %q is not key=value", name, part)
		}
		switch k {
		case "backend", "alg":
			row.Backend = v
		case "payload", "chunk":
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return row, fmt.Errorf("benchmark %q: bad %s %q", name, k, v)
			}
			if k == "payload" {
				row.Payload = n
			} else {
				row.Chunk = n
			}
		}
	}
	if row.Backend == "" || row.Payload == 0 {
		return row, fmt.Errorf("benchmark %q: no backend=, alg= or payload=", name)
	}
	return row, nil
}
