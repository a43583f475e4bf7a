package pkcs11_test

import (
	"testing"

	"github.com/signerkit/signerkit/internal/benchtime"
	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: a sign
// abandoned at its deadline must finish once the token answers.
func TestMain(m *testing.M) {
	benchtime.Default(benchtime.Short)
	goleak.VerifyTestMain(m)
}
