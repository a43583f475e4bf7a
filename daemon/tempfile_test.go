package daemon

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/signerkit/signerkit/internal/atomicfile"
)

// suffixes returns a suffix function that hands out names in order, then
// random ones.
func suffixes(names ...string) func() string {
	return func() string {
		if len(names) == 0 {
			return atomicfile.RandomHex()
		}
		n := names[0]
		names = names[1:]
		return n
	}
}

// tempFiles lists the temporary files of path in its directory.
func tempFiles(t *testing.T, path string) []string {
	t.Helper()
	m, err := filepath.Glob(path + ".*tmp")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// plantLink makes link a symbolic link to a file outside dir holding
// "theirs", and returns that file's path.
func plantLink(t *testing.T, link string) string {
	t.Helper()
	target := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(target, []byte("theirs"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	return target
}

func checkUntouched(t *testing.T, target string) {
	t.Helper()
	if b, err := os.ReadFile(target); err != nil || string(b) != "theirs" {
		t.Fatalf("the link's target now holds %q (%v): the write followed the link", b, err)
	}
}

func checkWritten(t *testing.T, path string, want string) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !fi.Mode().IsRegular() || (runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600) {
		t.Fatalf("%s is %v, want a regular file of mode 0600", path, fi.Mode())
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != want {
		t.Fatalf("%s holds %q (%v), want %q", path, b, err, want)
	}
}

// TestKeysFileTempSymlink: a symbolic link planted at the temporary name
// of signerkit-keys.json (the fixed name earlier versions used, or the
// name the write would take) is not followed: its target is unchanged and
// the file is written under a fresh name, renamed into place.
func TestKeysFileTempSymlink(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, KeysFile)
	legacy := plantLink(t, path+".tmp")
	if err := writeFileSync(path, []byte(`{"a": "1"}`)); err != nil {
		t.Fatal(err)
	}
	checkUntouched(t, legacy)
	checkWritten(t, path, `{"a": "1"}`)

	planted := plantLink(t, path+".guess.tmp")
	if err := writeFileDurable(path, []byte(`{"b": "2"}`), suffixes("guess")); err != nil {
		t.Fatal(err)
	}
	checkUntouched(t, planted)
	checkWritten(t, path, `{"b": "2"}`)
	if fi, err := os.Lstat(path + ".guess.tmp"); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the planted link: %v, %v", fi, err)
	}
}

// TestKeysFileTempEveryNameTaken: when every name tried is taken (links
// and files put there), the write fails with an error, follows no link,
// truncates no file and leaves the keys file as it was.
func TestKeysFileTempEveryNameTaken(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, KeysFile)
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	target := plantLink(t, path+".x.tmp")
	if err := os.WriteFile(path+".y.tmp", []byte("a leftover"), 0o600); err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, atomicfile.TempAttempts)
	for i := range atomicfile.TempAttempts {
		names = append(names, []string{"x", "y"}[i%2])
	}
	err := writeFileDurable(path, []byte("new"), suffixes(names...))
	if err == nil {
		t.Fatal("the write succeeded with every temporary name taken")
	}
	t.Log(err)
	checkUntouched(t, target)
	if b, _ := os.ReadFile(path + ".y.tmp"); string(b) != "a leftover" {
		t.Fatalf("the file at a taken name was changed: %q", b)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Fatalf("the keys file was changed: %q", b)
	}
}

// TestKeysFileTempLeftovers: temporary files left by writes that did not
// finish are never read; after a write, the fixed name of earlier versions
// and stale ones are gone, a recent one (a write in progress elsewhere)
// stays, and the write leaves none of its own, also when it fails.
func TestKeysFileTempLeftovers(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, KeysFile)
	old := time.Now().Add(-2 * staleTemp)
	for name, stale := range map[string]bool{".tmp": false, ".0123456789abcdef.tmp": true, ".fedcba9876543210.tmp": false} {
		if err := os.WriteFile(path+name, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
		if stale {
			if err := os.Chtimes(path+name, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := writeFileSync(path, []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	checkWritten(t, path, "{}\n")
	if got, want := tempFiles(t, path), []string{path + ".fedcba9876543210.tmp"}; !slices.Equal(got, want) {
		t.Fatalf("temporary files after the write: %q, want %q", got, want)
	}

	// A write that fails after creating its temporary file (the rename
	// onto a non-empty directory) removes it.
	blocked := filepath.Join(dir, "blocked")
	if err := os.MkdirAll(filepath.Join(blocked, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := writeFileSync(blocked, []byte("x")); err == nil {
		t.Fatal("renamed a file onto a non-empty directory")
	}
	if m := tempFiles(t, blocked); len(m) != 0 {
		t.Fatalf("a failed write left %q", m)
	}
}
