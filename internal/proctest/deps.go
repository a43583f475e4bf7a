package proctest

import (
	"os/exec"
	"strings"
	"testing"
)

// LinksNone fails t for every package that a build of pkg links (go list
// -deps, standard packages included) which is one of banned or lies below
// one of them. It skips t in -short mode and without a go command.
func LinksNone(t testing.TB, pkg string, banned ...string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs go list")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(goTool, "list", "-deps", pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 {
		t.Fatalf("go list -deps %s listed nothing", pkg)
	}
	for _, dep := range deps {
		for _, b := range banned {
			if dep == b || strings.HasPrefix(dep, b+"/") {
				t.Errorf("%s links %s", pkg, dep)
			}
		}
	}
}
