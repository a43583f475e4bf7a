package signerkit

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// root is the module's directory, where this file lives.
const root = "."

// packageDirs returns the directory, relative to root, of every package of
// the module that is not internal, in slash form ("" for the root).
func packageDirs(t *testing.T) []string {
	t.Helper()
	var dirs []string
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if rel != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "internal") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil && rel != "." {
				return filepath.SkipDir // a nested module (interop)
			}
			return nil
		}
		if strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			dir := path.Dir(rel)
			if dir == "." {
				dir = ""
			}
			if !seen[dir] {
				seen[dir] = true
				dirs = append(dirs, dir)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// TestModuleMap: the root package's doc names every package that is not
// internal, commands included.
func TestModuleMap(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(root, "doc.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range packageDirs(t) {
		if dir == "" {
			continue
		}
		if !regexp.MustCompile(`(^|[\s(,])` + regexp.QuoteMeta(dir) + `([\s:,)]|$)`).Match(doc) {
			t.Errorf("doc.go's module map does not name %s", dir)
		}
	}
}

// TestReadme: the README stays a short path, and every relative link in
// it and in docs/ leads to a file that exists.
func TestReadme(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(readme), "\n"); n > 200 {
		t.Errorf("README.md has %d lines; a newcomer's path is at most 200 (move the rest to docs/)", n)
	}
	for _, want := range []string{"go test -bench=. ./...", "make test", "docs/report/report.md"} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("README.md does not mention %s", want)
		}
	}
	pages, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	pages = append(pages, filepath.Join(root, "README.md"))
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, page := range pages {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(text), -1) {
			target, _, _ := strings.Cut(m[1], "#")
			if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(page), filepath.FromSlash(target))); err != nil {
				t.Errorf("%s links %s, which does not exist", page, m[1])
			}
		}
	}
}
