// Package benchtime shortens the default -benchtime of a package's
// benchmarks, so that `go test -bench=. ./...`, which runs every benchmark
// of the repository, stays within its budget of a few minutes on a 2-core
// machine: at go's default of 1 s a row, the rows of a few packages alone
// would take minutes. A -benchtime given on the command line wins; pass
// one (and -count) for figures to quote.
package benchtime

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// Short is the default a package's TestMain sets through Default.
const Short = "100ms"

// Default sets -benchtime to d unless the command line set it, and
// reports whether it did. Call it from TestMain, before m.Run. It parses
// the command line (flag.Parse), as m.Run would.
func Default(d string) bool { return defaultFlag("test.benchtime", d) }

// Parallel sets -parallel to n unless the command line set it, and
// reports whether it did: for a package whose parallel tests wait (on
// deadlines, shaped delays, a hung simulated device) rather than compute,
// where go's default of GOMAXPROCS, two on a 2-core machine, would
// serialise their waits. Call it from TestMain, before m.Run.
func Parallel(n int) bool { return defaultFlag("test.parallel", strconv.Itoa(n)) }

// defaultFlag sets the flag name to value unless the command line set it.
func defaultFlag(name, value string) bool {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	if set {
		return false
	}
	if err := flag.Set(name, value); err != nil {
		fmt.Fprintf(os.Stderr, "benchtime: setting the default -%s: %v\n", strings.TrimPrefix(name, "test."), err)
		os.Exit(2)
	}
	return true
}

// Main is the whole TestMain of a package that needs nothing else: it
// sets the default -benchtime to Short, runs the package's tests and
// benchmarks, and exits with their status.
func Main(m *testing.M) {
	Default(Short)
	os.Exit(m.Run())
}
