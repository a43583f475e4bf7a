package threshold_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every Signer, Party and connection a test starts is gone when it ends.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
