package report

import (
	"context"
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/internal/thresholdbench"
)

// DefaultThresholdRows selects the threshold rows a run makes unless told
// otherwise: online signing at 1 in flight on every network profile with
// the nonces in memory, the echo beside each, the presign rows of the
// protocol, a party's store and the network, the compute rows and the key
// generation in process: 15 rows, about 30 s at a benchtime of 1 s on a
// 2-core VM. The rows with many signs in flight, the nonces in files and
// the key generation over the network are left to RunConfig.ThresholdRows
// (signerbench's -threshold).
const DefaultThresholdRows = `^(sign/store=mem/net=[^/]+/inflight=1|echo/net=[^/]+|presign/(commit|store=mem/batch=1024|net=same-zone/batch=1024)|compute/[^/]+|dkg/inprocess)$`

// DefaultThresholdBenchtime is each threshold row's benchtime in a run.
const DefaultThresholdBenchtime = "1s"

// thresholdRow is one row of thresholdbench's BenchmarkThreshold, named as
// there below thresholdbench.Row. A sign row signs on the Fixture of its
// store and network, which the runner starts once for all the rows that
// share it; the other rows bring what they need.
type thresholdRow struct {
	name string
	// For a sign row: the fixture's nonce store ("mem" or "dir"), network
	// and the signs in flight.
	store    string
	net      thresholdbench.Network
	inflight int
	// For the other rows.
	bench func(b *testing.B)
}

func (r thresholdRow) sign() bool { return r.bench == nil }

// thresholdRows lists BenchmarkThreshold's rows in its order, with the
// same names, so that a run and `go test -bench` output read alike.
func thresholdRows() []thresholdRow {
	var rows []thresholdRow
	for _, store := range []string{"mem", "dir"} {
		for _, n := range thresholdbench.Networks() {
			if store == "dir" && n.Name != "same-zone" && n.Name != "transatlantic" {
				continue // as BenchmarkThreshold: the file's cost is the same on every network
			}
			for _, k := range thresholdbench.InFlight {
				rows = append(rows, thresholdRow{name: fmt.Sprintf("sign/store=%s/net=%s/inflight=%d", store, n.Name, k), store: store, net: n, inflight: k})
			}
		}
	}
	for _, n := range thresholdbench.Networks() {
		rows = append(rows, thresholdRow{name: "echo/net=" + n.Name, bench: func(b *testing.B) { thresholdbench.Echo(b, n) }})
	}
	rows = append(rows, thresholdRow{name: "presign/commit", bench: thresholdbench.Commit})
	for _, batch := range []int{64, 1024} {
		rows = append(rows,
			thresholdRow{name: fmt.Sprintf("presign/store=mem/batch=%d", batch), bench: func(b *testing.B) {
				thresholdbench.Generate(b, func() guard.FS { return &guard.MemFS{} }, batch)
			}},
			thresholdRow{name: fmt.Sprintf("presign/store=dir/batch=%d", batch), bench: func(b *testing.B) {
				thresholdbench.Generate(b, func() guard.FS { return guard.DirFS(b.TempDir()) }, batch)
			}})
	}
	if n, ok := thresholdbench.NetworkNamed("same-zone"); ok {
		rows = append(rows, thresholdRow{name: "presign/net=" + n.Name + "/batch=1024", bench: func(b *testing.B) { thresholdbench.PresignNet(b, n, 1024) }})
	}
	rows = append(rows,
		thresholdRow{name: "compute/party-share", bench: thresholdbench.PartyShare},
		thresholdRow{name: "compute/coordinator-commitment", bench: thresholdbench.CoordinatorCommitment},
		thresholdRow{name: "compute/coordinator-aggregate", bench: thresholdbench.CoordinatorAggregate},
		thresholdRow{name: "dkg/inprocess", bench: thresholdbench.DKGInProcess})
	for _, n := range thresholdbench.Networks() {
		rows = append(rows, thresholdRow{name: "dkg/net=" + n.Name, bench: func(b *testing.B) { thresholdbench.DKGNet(b, n) }})
	}
	return rows
}

// ThresholdRowNames returns the names of the threshold rows a run can
// make, in the order it makes them: BenchmarkThreshold's rows below
// thresholdbench.Row ("sign/store=mem/net=transatlantic/inflight=1").
func ThresholdRowNames() []string {
	var out []string
	for _, r := range thresholdRows() {
		out = append(out, r.name)
	}
	return out
}

// CheckBenchtime checks a benchtime in `go test -benchtime` syntax: a
// positive duration or a positive count followed by x.
func CheckBenchtime(s string) error {
	if n, ok := strings.CutSuffix(s, "x"); ok {
		if v, err := strconv.Atoi(n); err != nil || v <= 0 {
			return fmt.Errorf("benchtime %q: want a positive count before the x", s)
		}
		return nil
	}
	if d, err := time.ParseDuration(s); err != nil || d <= 0 {
		return fmt.Errorf("benchtime %q: want a positive duration or a count such as 100x", s)
	}
	return nil
}

// setBenchtime sets the benchtime testing.Benchmark runs with and returns
// a function that puts the previous one back. testing.Benchmark reads it
// from the test.benchtime flag, which testing.Init registers.
func setBenchtime(s string) (restore func(), err error) {
	if err := CheckBenchtime(s); err != nil {
		return nil, err
	}
	testing.Init()
	f := flag.Lookup("test.benchtime")
	if f == nil {
		return nil, fmt.Errorf("report: no test.benchtime flag to set")
	}
	old := f.Value.String()
	if err := f.Value.Set(s); err != nil {
		return nil, fmt.Errorf("report: benchtime %q: %w", s, err)
	}
	return func() { f.Value.Set(old) }, nil
}

// RunThreshold runs the threshold rows cfg selects (ThresholdRows, or
// DefaultThresholdRows when nil), each once through testing.Benchmark for
// cfg.ThresholdBenchtime, and returns them as thresholdbench reads them
// from `go test -bench` output: one run each. The sign rows of one store
// and network share one Fixture, started before the first of them and
// closed after the last, as in BenchmarkThreshold. A row that fails
// fails the run: every signature a row makes is verified.
func RunThreshold(ctx context.Context, cfg RunConfig) ([]thresholdbench.Result, error) {
	cfg.defaults()
	sel := cfg.ThresholdRows
	if sel == nil {
		sel = regexp.MustCompile(DefaultThresholdRows)
	}
	var rows []thresholdRow
	for _, r := range thresholdRows() {
		if sel.MatchString(r.name) {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return nil, nil
	}
	restore, err := setBenchtime(cfg.ThresholdBenchtime)
	if err != nil {
		return nil, err
	}
	defer restore()

	var (
		fix     *thresholdbench.Fixture
		fixKey  string
		fixDir  string
		height  atomic.Int64
		results []thresholdbench.Result
	)
	closeFixture := func() {
		if fix != nil {
			fix.Close()
			fix, fixKey = nil, ""
		}
		if fixDir != "" {
			os.RemoveAll(fixDir)
			fixDir = ""
		}
	}
	defer closeFixture()
	for _, r := range rows {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		f := r.bench
		if r.sign() {
			if key := r.store + "/" + r.net.Name; key != fixKey {
				closeFixture()
				fc := thresholdbench.Config{Net: r.net}
				if r.store == "dir" {
					if fixDir, err = os.MkdirTemp("", "signerbench-nonces-"); err != nil {
						return nil, fmt.Errorf("report: threshold %s: %w", r.name, err)
					}
					fc.NonceDir = fixDir
				}
				if fix, err = thresholdbench.Start(ctx, fc); err != nil {
					return nil, fmt.Errorf("report: threshold %s: start the parties: %w", r.name, err)
				}
				fixKey = key
				height.Store(thresholdbench.FirstHeight - 1)
			}
			sf, k := fix, r.inflight
			f = func(b *testing.B) { thresholdbench.Sign(b, sf, k, &height) }
		}
		start := time.Now()
		var failed atomic.Bool
		res := testing.Benchmark(func(b *testing.B) {
			defer func() { failed.Store(failed.Load() || b.Failed()) }()
			f(b)
		})
		if failed.Load() || res.N == 0 {
			// testing.Benchmark keeps the failure's message to itself.
			return nil, fmt.Errorf("report: threshold row %s failed; see why with go test -run '^$' -bench 'Threshold/%s/%s$' ./internal/thresholdbench",
				r.name, thresholdbench.Row, regexp.QuoteMeta(r.name))
		}
		tr := thresholdResult(r.name, res)
		cfg.logf("threshold %-46s %s  (%d iterations, %s)", r.name, thresholdSummary(tr), res.N, time.Since(start).Round(time.Millisecond))
		results = append(results, tr)
	}
	return results, nil
}

// thresholdResult turns one testing.Benchmark result into a row with one
// run, as ParseResults would read its line of `go test -bench` output.
func thresholdResult(name string, res testing.BenchmarkResult) thresholdbench.Result {
	tr := thresholdbench.Result{Name: name, Samples: map[string][]float64{}, Iterations: []int{res.N}}
	tr.Samples["ns/op"] = []float64{float64(res.T.Nanoseconds()) / float64(res.N)}
	if res.MemAllocs > 0 || res.MemBytes > 0 {
		tr.Samples["B/op"] = []float64{float64(res.AllocedBytesPerOp())}
		tr.Samples["allocs/op"] = []float64{float64(res.AllocsPerOp())}
	}
	units := make([]string, 0, len(res.Extra))
	for u := range res.Extra {
		units = append(units, u)
	}
	slices.Sort(units)
	for _, u := range units {
		tr.Samples[u] = []float64{res.Extra[u]}
	}
	return tr
}

// thresholdSummary is a progress line's figures for a row.
func thresholdSummary(r thresholdbench.Result) string {
	for _, u := range []string{"p50-ms", "commitments/s/core", "cpu-µs/op", "cpu-ms/op"} {
		if v, ok := r.Get(u); ok {
			s := fmt.Sprintf("%s %.4g", u, v)
			if u == "p50-ms" {
				if p99, ok := r.Get("p99-ms"); ok {
					s += fmt.Sprintf("  p99-ms %.4g", p99)
				}
			}
			return s
		}
	}
	v, _ := r.Get("ns/op")
	return fmt.Sprintf("ns/op %.4g", v)
}
