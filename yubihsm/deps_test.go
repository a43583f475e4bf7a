package yubihsm_test

import (
	"testing"

	"github.com/signerkit/signerkit/internal/proctest"
)

// A program that imports yubihsm links no simulator code: the simulator,
// its time plumbing and its client (yubihsmsim.HTTPClient) live in
// yubihsm/yubihsmsim, which plugs in through Config.HTTPClient. Nor does
// it link a test package. Measured by go list, as a build would see it.
func TestNoSimulatorDependency(t *testing.T) {
	t.Parallel()
	proctest.LinksNone(t, "github.com/signerkit/signerkit/yubihsm",
		"github.com/signerkit/signerkit/yubihsm/yubihsmsim",
		"github.com/signerkit/signerkit/ledger/ledgersim",
		"github.com/signerkit/signerkit/internal/simtime",
		"net/http/httptest",
		"testing")
}
