package frost

import (
	"testing"

	"github.com/signerkit/signerkit/internal/benchtime"
)

func TestMain(m *testing.M) { benchtime.Main(m) }
