// Command signerbench answers "which signer should our validators use?"
// with numbers: it signs with every signer path of the benchmark registry
// (simulated devices by default, real ones when configured), traces every
// sign, times every verification case of the registry, and writes a
// report — a markdown table per signer path with p50 and p99, the
// dominant stage and the stages that add up to it, the share of a 1 s
// consensus timeout, per-phase statistics of consecutive heights, the
// verification table, BLS against Ed25519 beside the SAFE network's
// published figures, the threshold signer (FROST 2-of-3) on emulated
// networks beside published threshold figures, and the SVG charts — into
// the folder given by -out.
//
// The threshold rows are thresholdbench's BenchmarkThreshold rows, each
// run through testing.Benchmark for -threshold-benchtime. By default only
// the affordable ones run (report.DefaultThresholdRows, about 30 s at the
// default benchtime): signing at 1 in flight on every network profile,
// the echo beside each, presigning, compute and key generation in
// process. -threshold selects others by name, such as the rows with
// many signs in flight ('inflight=(50|100|200)$'), and -no-threshold
// runs none.
//
// Usage:
//
//	go run ./cmd/signerbench -out report              # simulators, a few minutes
//	go run ./cmd/signerbench -backends 'ledger|yubihsm' -payloads 108,128
//	go run ./cmd/signerbench -backends '^(raw-ed25519|bls-minpk|raw-circl-minpk)$' \
//	    -verify '^(ed25519|bls12381-minpk|circl-bls12381-minpk)$' -no-phases   # BLS against Ed25519 alone
//	go test -run '^$' -bench . . > bench.txt && go run ./cmd/signerbench -input bench.txt -out report
//	go run ./cmd/signerbench -ledger hid -yubihsm http://127.0.0.1:12345   # real devices
//	go run ./cmd/signerbench -backends '^raw-ed25519$' -no-verify -no-phases \
//	    -threshold '^sign/store=mem/' -threshold-benchtime 2000x   # every signing row of the threshold signer
//
// The threshold ECDSA table puts DKLS23's rows and those of the CGGMP21
// comparator (BenchmarkThreshold/dkls23-2of3-secp256k1/… and
// …/cggmp21-2of3-secp256k1/…, of any package) beside FROST's; they come
// from -input only (make bench-threshold-ecdsa), and a scheme without
// rows is marked not measured.
//
// -input also takes the whole suite's output (go test -bench . ./...):
// each row belongs to the package of the pkg: line above it, and the
// rows of packages the report does not read (guard's, the threshold
// package's own BenchmarkSign, …) are left out and named on stderr.
//
// Every figure says whether it was measured on this host or modeled from
// a device's latency profile, and names the profile.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/signerkit/signerkit/internal/report"
	"github.com/signerkit/signerkit/internal/simtime"
	"github.com/signerkit/signerkit/internal/thresholdbench"
)

// devices are the environment variables through which real devices and
// emulators opt in; each flag below sets one.
var devices = []struct{ flag, env, usage string }{
	{"ledger", "SIGNERKIT_LEDGER", "a real Ledger: `hid` for the first one found, or a HID device path"},
	{"speculos", "SIGNERKIT_SPECULOS", "Ledger's Speculos emulator at `host:port` (its APDU port)"},
	{"yubihsm", "SIGNERKIT_YUBIHSM", "a YubiHSM 2 behind yubihsm-connector at `URL` (http://host:port)"},
	{"pkcs11-module", "SIGNERKIT_PKCS11_MODULE", "a PKCS#11 module `path` for the pkcs11 rows (default: SoftHSM2)"},
	{"pkcs11-uri", "SIGNERKIT_PKCS11_URI", "an RFC 7512 `pkcs11: URI` of a real token's key"},
}

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "signerbench:", err)
		}
		os.Exit(2)
	}
}

// thresholdPackage is the package of the BenchmarkThreshold rows
// thresholdbench.ParseResults reads.
var thresholdPackage = reflect.TypeFor[thresholdbench.Result]().PkgPath()

// otherPackages says which packages' benchmark lines -input left out, or
// "" when none; read are packages whose lines the threshold ECDSA table
// read.
func otherPackages(other map[string]int, read map[string]bool) string {
	pkgs := slices.DeleteFunc(slices.Sorted(maps.Keys(other)), func(p string) bool {
		return p == thresholdPackage || read[p] // read by the threshold tables
	})
	if len(pkgs) == 0 {
		return ""
	}
	n := 0
	for _, p := range pkgs {
		n += other[p]
	}
	return fmt.Sprintf("left out %d benchmark lines of the packages the report does not read: %s", n, strings.Join(pkgs, ", "))
}

// options are signerbench's flags.
type options struct {
	out, input                  string
	backends, payloads, chunks  string
	rowTime, phaseTime, timeout time.Duration
	heights, compareSamples     int
	noPhases, noVerify, quiet   bool
	verify, sim                 string
	threshold                   string
	noThreshold                 bool
	thresholdBenchtime          string
	devices                     map[string]*string // by environment variable
}

// parseFlags reads args into options, without applying them.
func parseFlags(args []string, stderr io.Writer) (*options, error) {
	o := &options{devices: map[string]*string{}}
	fs := flag.NewFlagSet("signerbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.out, "out", "signerbench-report", "write report.md and the SVG charts into this `folder`")
	fs.StringVar(&o.input, "input", "", "read `go test -bench` output from this `file` (- for stdin) instead of running the scenarios")
	fs.StringVar(&o.backends, "backends", "", "run only the backends whose names match this `regexp`")
	fs.StringVar(&o.payloads, "payloads", "", "comma-separated payload `sizes` in bytes (default: each backend's and verification case's own)")
	fs.StringVar(&o.chunks, "chunks", "", "comma-separated APDU chunk `sizes` for the backends that have them, the Ledger's (default: each backend's own)")
	fs.DurationVar(&o.rowTime, "row-time", 100*time.Millisecond, "host `time` to spend signing each row")
	fs.IntVar(&o.heights, "heights", 40, "consecutive `heights` of the phase run on each Ed25519 path")
	fs.DurationVar(&o.phaseTime, "phase-time", 2*time.Second, "host `time` cap of each path's phase run")
	fs.BoolVar(&o.noPhases, "no-phases", false, "skip the phase run")
	fs.StringVar(&o.verify, "verify", "", "run only the verification cases whose names match this `regexp`")
	fs.BoolVar(&o.noVerify, "no-verify", false, "skip the verification cases")
	fs.IntVar(&o.compareSamples, "compare-samples", 1000, "least `samples` of each row of the BLS and Ed25519 comparison, as published (0: the row time alone)")
	fs.StringVar(&o.sim, "sim", "", "simulated time: `accounted` (default; modeled time reported, not waited) or realtime (also slept)")
	fs.StringVar(&o.threshold, "threshold", report.DefaultThresholdRows, "run the threshold signer's rows (FROST 2-of-3) whose names match this `regexp`, names as below BenchmarkThreshold/"+thresholdbench.Row+"/: sign/store=mem/net=transatlantic/inflight=1, …; the default leaves out the rows with many signs in flight, the nonces in files and the networked key generation")
	fs.BoolVar(&o.noThreshold, "no-threshold", false, "skip the threshold signer's rows, or leave out those of -input")
	fs.StringVar(&o.thresholdBenchtime, "threshold-benchtime", report.DefaultThresholdBenchtime, "benchtime of each threshold row, in go test -benchtime syntax (a `duration` or a count such as 300x)")
	fs.DurationVar(&o.timeout, "timeout", time.Second, "the consensus `timeout` shares are taken of")
	fs.BoolVar(&o.quiet, "q", false, "no progress lines")
	for _, d := range devices {
		o.devices[d.env] = fs.String(d.flag, "", d.usage+" (sets "+d.env+")")
	}
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: signerbench [flags]\n\nWrites a latency report of every signer path. Flags:\n\n")
		fs.PrintDefaults()
		fmt.Fprintf(stderr, "\nReal devices opt in through these variables (or the flags above):\n")
		for _, d := range devices {
			fmt.Fprintf(stderr, "  %-24s %s\n", d.env, strings.ReplaceAll(d.usage, "`", ""))
		}
		fmt.Fprintf(stderr, "  %-24s %s\n", simtime.EnvVar, "realtime: simulated devices sleep their modeled time")
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return o, nil
}

// setEnv sets the environment variables the device flags and -sim stand
// for.
func (o *options) setEnv() error {
	for env, v := range o.devices {
		if *v != "" {
			os.Setenv(env, *v)
		}
	}
	switch o.sim {
	case "", "accounted", "realtime":
		if o.sim != "" {
			os.Setenv(simtime.EnvVar, o.sim)
		}
	default:
		return fmt.Errorf("-sim %q: want accounted or realtime", o.sim)
	}
	return nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if err := o.setEnv(); err != nil {
		return err
	}
	rep := &report.Report{
		Generated: time.Now(),
		Host:      host(),
		Timeout:   o.timeout,
	}
	if o.input != "" {
		err = readInput(rep, o, stderr)
	} else {
		rep, err = runScenarios(ctx, rep, o, stderr)
	}
	if err != nil {
		return err
	}
	if err := rep.WriteDir(o.out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s/%s\n", o.out, strings.Join(rep.Files(), ", "))
	return nil
}

// readInput fills rep with the rows of -input, `go test -bench` output.
func readInput(rep *report.Report, o *options, stderr io.Writer) error {
	var r io.Reader = os.Stdin
	if o.input != "-" {
		f, err := os.Open(o.input)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	// The output may be the whole suite's (go test -bench . ./...):
	// each reader takes its package's lines, by their pkg: lines.
	parsed, err := report.ParseBenchSuite(bytes.NewReader(data))
	if err != nil {
		return err
	}
	rows, verifies := parsed.Sign, parsed.Verify
	var th []thresholdbench.Result
	var ecdsa map[string][]thresholdbench.Result
	var ecdsaPkgs map[string]bool
	if !o.noThreshold {
		if th, err = thresholdbench.ParseResults(bytes.NewReader(report.PackageLines(data, thresholdPackage))); err != nil {
			return err
		}
		if ecdsa, ecdsaPkgs, err = report.ParseThresholdECDSA(data); err != nil {
			return err
		}
	}
	if !o.quiet {
		if note := otherPackages(parsed.Other, ecdsaPkgs); note != "" {
			fmt.Fprintln(stderr, note)
		}
	}
	if len(rows) == 0 && len(verifies) == 0 && len(th) == 0 && len(ecdsa) == 0 {
		return fmt.Errorf("%s: no BenchmarkSign, BenchmarkVerify or BenchmarkThreshold rows", o.input)
	}
	rep.Rows, rep.Verifies, rep.Threshold, rep.ThresholdECDSA = rows, verifies, th, ecdsa
	rep.Source = "`go test -bench` output (means over each row's signs; no percentiles)"
	rep.ThresholdSource = "read from `go test -bench` output: each value the median over the row's runs"
	return nil
}

// runConfig checks the flags of a run and returns its configuration.
func (o *options) runConfig(stderr io.Writer) (report.RunConfig, error) {
	if o.compareSamples < 0 {
		return report.RunConfig{}, fmt.Errorf("-compare-samples %d: want 0 or more", o.compareSamples)
	}
	cfg := report.RunConfig{RowBudget: o.rowTime, Heights: o.heights, PhaseBudget: o.phaseTime, NoPhases: o.noPhases, Vote: report.Vote,
		NoVerify: o.noVerify, CompareSamples: o.compareSamples, NoThreshold: o.noThreshold, ThresholdBenchtime: o.thresholdBenchtime}
	if !o.quiet {
		cfg.Progress = stderr
	}
	if o.backends != "" {
		re, err := regexp.Compile(o.backends)
		if err != nil {
			return cfg, fmt.Errorf("-backends: %w", err)
		}
		cfg.Backends = re
	}
	if o.verify != "" {
		re, err := regexp.Compile(o.verify)
		if err != nil {
			return cfg, fmt.Errorf("-verify: %w", err)
		}
		cfg.Verify = re
	}
	if !o.noThreshold {
		re, err := regexp.Compile(o.threshold)
		if err != nil {
			return cfg, fmt.Errorf("-threshold: %w", err)
		}
		cfg.ThresholdRows = re
		if err := report.CheckBenchtime(o.thresholdBenchtime); err != nil {
			return cfg, fmt.Errorf("-threshold-benchtime: %w", err)
		}
	}
	var err error
	if cfg.Payloads, err = sizes(o.payloads); err != nil {
		return cfg, fmt.Errorf("-payloads: %w", err)
	}
	if cfg.Chunks, err = sizes(o.chunks); err != nil {
		return cfg, fmt.Errorf("-chunks: %w", err)
	}
	return cfg, nil
}

// runScenarios runs the scenarios the flags select and returns their
// report, with base's time, host and timeout and the host's load before
// and after.
func runScenarios(ctx context.Context, base *report.Report, o *options, stderr io.Writer) (*report.Report, error) {
	cfg, err := o.runConfig(stderr)
	if err != nil {
		return nil, err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	start := time.Now()
	loadBefore := loadAverage()
	ran, err := report.Run(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if loadBefore != "" {
		// Every measured figure is host time: say how busy the host was.
		ran.Notes = append(ran.Notes, fmt.Sprintf("load average (1 min) of the host: %s when the run started, %s when it ended, on %d CPUs; other work on the host inflates the measured figures, means most",
			loadBefore, loadAverage(), runtime.NumCPU()))
	}
	ran.Generated, ran.Host, ran.Timeout = base.Generated, base.Host, base.Timeout
	ran.SimMode = simtime.ModeFromEnv().String()
	if !o.quiet {
		fmt.Fprintf(stderr, "ran %d sign, %d verification and %d threshold rows in %s\n", len(ran.Rows), len(ran.Verifies), len(ran.Threshold), time.Since(start).Round(time.Millisecond))
	}
	return ran, nil
}

// host describes this machine: OS and architecture, the CPU's model and
// its SHA-2 instructions when /proc/cpuinfo says (the comparison with
// published figures turns on them), CPUs and Go version.
func host() string {
	cpu := ""
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		cpu = cpuInfo(string(data))
	}
	return fmt.Sprintf("%s/%s, %s%d CPUs, %s", runtime.GOOS, runtime.GOARCH, cpu, runtime.NumCPU(), runtime.Version())
}

// cpuInfo reads the first processor of a /proc/cpuinfo: "<model>, with
// SHA-256 instructions, " and the like, or "".
func cpuInfo(text string) string {
	var model string
	flags := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "model name":
			if model == "" {
				model = strings.Join(strings.Fields(v), " ")
			}
		case "flags", "Features": // x86, arm64
			if len(flags) == 0 {
				for _, f := range strings.Fields(v) {
					flags[f] = true
				}
			}
		}
	}
	if model == "" && len(flags) == 0 {
		return ""
	}
	var sha []string
	if flags["sha_ni"] || flags["sha2"] {
		sha = append(sha, "SHA-256")
	}
	if flags["sha512"] {
		sha = append(sha, "SHA-512")
	}
	var parts []string
	if model != "" {
		parts = append(parts, model)
	}
	if len(sha) > 0 {
		parts = append(parts, "with "+strings.Join(sha, " and ")+" instructions")
	} else if len(flags) > 0 {
		parts = append(parts, "no SHA-2 instructions")
	}
	return strings.Join(parts, ", ") + ", "
}

// loadAverage returns the host's 1-minute load average from
// /proc/loadavg, or "" where there is none.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// sizes parses "32,64,128".
func sizes(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("bad size %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}
