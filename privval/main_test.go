package privval

import (
	"testing"

	"github.com/signerkit/signerkit/internal/benchtime"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	benchtime.Default(benchtime.Short)
	goleak.VerifyTestMain(m)
}
