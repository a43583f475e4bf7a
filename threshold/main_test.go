package threshold_test

import (
	"testing"

	"github.com/signerkit/signerkit/internal/benchtime"
	"go.uber.org/goleak"
)

// Every Signer, Party and connection a test starts is gone when it ends.
func TestMain(m *testing.M) {
	benchtime.Default(benchtime.Short)
	benchtime.Parallel(4) // the parallel tests wait rather than compute
	goleak.VerifyTestMain(m)
}
