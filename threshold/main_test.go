package threshold_test

import (
	"flag"
	"strconv"
	"testing"

	"github.com/signerkit/signerkit/internal/benchtime"
	"go.uber.org/goleak"
)

// Every Signer, Party and connection a test starts is gone when it ends.
func TestMain(m *testing.M) {
	benchtime.Default(benchtime.Short)
	defaultParallel(4)
	goleak.VerifyTestMain(m)
}

// defaultParallel sets -parallel to n unless the command line set it. The
// tests marked parallel here spend most of their time waiting (out a
// deadline, for a refused peer), and are not the ones whose assertions
// depend on timing (round trips, hedges, party timeouts), which stay
// sequential; go's default of GOMAXPROCS would run two at a time.
func defaultParallel(n int) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", strconv.Itoa(n))
	}
}
