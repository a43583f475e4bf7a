package daemon

import (
	"flag"
	"os"
	"testing"
	"time"

	"github.com/signerkit/signerkit/internal/proctest"
)

// simulators are the commands TestDeviceLossRealSimulators runs as
// processes, by executable name.
var simulators = map[string]string{
	"yubihsmsim": "github.com/signerkit/signerkit/cmd/yubihsmsim",
	"ledgersim":  "github.com/signerkit/signerkit/cmd/ledgersim",
}

// TestMain starts building the simulators while the tests that do not
// run them run, and removes them at the end.
func TestMain(m *testing.M) {
	flag.Parse()
	if !testing.Short() {
		for name, pkg := range simulators {
			proctest.Prebuild(pkg, name)
		}
	}
	os.Exit(proctest.Main(m))
}

// testReopenBackoff is the first reopen backoff of the tests that wait
// for a backend to be reopened (Options.reopenBackoff): what they check
// does not depend on how long the daemon waits between attempts.
const testReopenBackoff = 10 * time.Millisecond
