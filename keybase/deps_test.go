package keybase_test

import (
	"os/exec"
	"strings"
	"testing"
)

// Importing keybase must not link goleveldb: reading gnokey's own key
// database is package keybase/gnokeyhome's, which programs that read key
// files only do not import. Measured by go list, as a build would see it.
func TestNoLevelDBDependency(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "github.com/signerkit/signerkit/keybase").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 {
		t.Fatal("go list listed nothing")
	}
	for _, dep := range deps {
		for _, banned := range []string{"github.com/syndtr/goleveldb", "github.com/golang/snappy", "github.com/signerkit/signerkit/keybase/gnokeyhome"} {
			if dep == banned || strings.HasPrefix(dep, banned+"/") {
				t.Errorf("keybase depends on %s", dep)
			}
		}
	}
}
