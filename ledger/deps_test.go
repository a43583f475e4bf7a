package ledger_test

import (
	"testing"

	"github.com/signerkit/signerkit/internal/proctest"
)

// Importing ledger or ledgersim must not link zondax/ledger-go, nor the
// gRPC, protobuf and zap packages it brings: those belong to package
// ledgergo alone. Measured by go list, as a build would see it.
func TestNoLedgerGoDependency(t *testing.T) {
	t.Parallel()
	for _, pkg := range []string{"github.com/signerkit/signerkit/ledger", "github.com/signerkit/signerkit/ledger/ledgersim"} {
		proctest.LinksNone(t, pkg, "github.com/zondax/ledger-go", "google.golang.org/grpc", "google.golang.org/protobuf", "go.uber.org/zap", "github.com/golang/protobuf")
	}
}

// A program that imports ledger links no simulator code: the simulator,
// its time plumbing and its Speculos client (ledgersim.SpeculosDialer,
// with the extension frames of ledger/internal/specext) live in
// ledger/ledgersim, which plugs in through Config.Dial. Nor does it link
// a test package.
func TestNoSimulatorDependency(t *testing.T) {
	t.Parallel()
	proctest.LinksNone(t, "github.com/signerkit/signerkit/ledger",
		"github.com/signerkit/signerkit/ledger/ledgersim",
		"github.com/signerkit/signerkit/ledger/internal/specext",
		"github.com/signerkit/signerkit/yubihsm/yubihsmsim",
		"github.com/signerkit/signerkit/internal/simtime",
		"net/http/httptest",
		"testing")
}
