package bench_test

import (
	"os"
	"testing"

	"github.com/signerkit/signerkit/internal/benchtime"
)

// TestMain runs this package's tests with rows of a few milliseconds,
// unless -benchtime is given. The package has no benchmarks of its own:
// its tests run rows through testing.Benchmark only to check what the
// rows report, which does not depend on how long they run, and at go's
// default of 1 s a row they would spend seconds of every
// `go test -bench=. ./...` on nothing.
func TestMain(m *testing.M) {
	benchtime.Default("20ms")
	os.Exit(m.Run())
}
