package signerkit

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestExamplesImportNoInternal: no Example of a package that is not
// internal imports an internal/ package, since users cannot.
func TestExamplesImportNoInternal(t *testing.T) {
	for _, dir := range packageDirs(t) {
		files, _ := filepath.Glob(filepath.Join(root, dir, "*_test.go"))
		for _, name := range files {
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly|parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			src, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			if !regexp.MustCompile(`(?m)^func Example`).Match(src) {
				continue
			}
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if strings.HasPrefix(p, "github.com/signerkit/signerkit/") && strings.Contains(p+"/", "/internal/") {
					t.Errorf("%s: an example imports %s", name, p)
				}
			}
		}
	}
}
