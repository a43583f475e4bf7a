package ledger_test

import (
	"os/exec"
	"strings"
	"testing"
)

// Importing ledger or ledgersim must not link zondax/ledger-go, nor the
// gRPC, protobuf and zap packages it brings: those belong to package
// ledgergo alone. Measured by go list, as a build would see it.
func TestNoLedgerGoDependency(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs go list")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	for _, pkg := range []string{"github.com/signerkit/signerkit/ledger", "github.com/signerkit/signerkit/ledger/ledgersim"} {
		out, err := exec.Command(goTool, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", pkg, err, out)
		}
		deps := strings.Fields(string(out))
		if len(deps) == 0 {
			t.Fatalf("go list %s listed nothing", pkg)
		}
		for _, dep := range deps {
			for _, banned := range []string{"github.com/zondax/ledger-go", "google.golang.org/grpc", "google.golang.org/protobuf", "go.uber.org/zap", "github.com/golang/protobuf"} {
				if dep == banned || strings.HasPrefix(dep, banned+"/") {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
}
