package bcryptsalt

import (
	"testing"

	"github.com/signerkit/signerkit/internal/benchtime"
)

// TestMain shortens the default -benchtime (internal/benchtime), as the
// other packages of the benchmark suite do: a -benchtime given on the
// command line still wins.
func TestMain(m *testing.M) { benchtime.Main(m) }
