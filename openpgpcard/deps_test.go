package openpgpcard_test

import (
	"testing"

	"github.com/signerkit/signerkit/internal/proctest"
)

// A program that imports openpgpcard links no simulator code, no test
// package and no PIV library: the simulator plugs in through Config.Dial,
// and PC/SC is this package's own binding.
func TestNoSimulatorDependency(t *testing.T) {
	t.Parallel()
	proctest.LinksNone(t, "github.com/signerkit/signerkit/openpgpcard",
		"github.com/signerkit/signerkit/openpgpcard/cardsim",
		"github.com/signerkit/signerkit/internal/simtime",
		"github.com/go-piv/piv-go/v2/piv",
		"testing")
}
