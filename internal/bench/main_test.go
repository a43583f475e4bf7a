package bench_test

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

// TestMain runs this package's tests with rows of a few milliseconds.
// The package has no benchmarks of its own: its tests run rows through
// testing.Benchmark only to check what the rows report, which does not
// depend on how long they run, and at go's default of 1 s a row they
// would spend seconds of every `go test -bench=. ./...` on nothing.
func TestMain(m *testing.M) {
	flag.Parse()
	if err := flag.Set("test.benchtime", "20ms"); err != nil {
		fmt.Fprintln(os.Stderr, "bench: setting the benchtime:", err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}
