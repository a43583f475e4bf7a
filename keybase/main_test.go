package keybase

import (
	"testing"

	"github.com/signerkit/signerkit/internal/benchtime"
)

// TestMain gives BenchmarkSignEd25519 internal/benchtime's short default
// (100 ms) unless -benchtime is given, as the repository's other packages
// do, so that `go test -bench=. ./...` stays within its budget; pass
// -benchtime (and -count) for figures to quote.
func TestMain(m *testing.M) { benchtime.Main(m) }
