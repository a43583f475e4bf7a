package bls_test

import (
	"os"
	"testing"

	"github.com/signerkit/signerkit/internal/benchtime"
)

func TestMain(m *testing.M) {
	benchtime.Default(benchtime.Short)
	os.Exit(m.Run())
}
