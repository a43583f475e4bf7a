package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"
)

// names returns a Random that hands out names in order, then random ones.
func names(list ...string) func() string {
	i := 0
	return func() string {
		if i++; i <= len(list) {
			return list[i-1]
		}
		return RandomHex()
	}
}

// leftovers lists what is in dir besides the files named keep.
func leftovers(t *testing.T, dir string, keep ...string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if !slices.Contains(keep, e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}

func checkFile(t *testing.T, path, want string, perm fs.FileMode) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !fi.Mode().IsRegular() {
		t.Fatalf("%s is %v, want a regular file", path, fi.Mode())
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != perm {
		t.Errorf("%s has mode %v, want %v", path, fi.Mode().Perm(), perm)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != want {
		t.Fatalf("%s holds %q (%v), want %q", path, b, err, want)
	}
}

func TestWriteFileReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	for _, data := range []string{"one", "two, longer", ""} {
		if err := WriteFile(path, []byte(data), Options{}); err != nil {
			t.Fatal(err)
		}
		checkFile(t, path, data, 0o600)
	}
	if l := leftovers(t, dir, "state.json"); len(l) != 0 {
		t.Errorf("left behind: %v", l)
	}
}

func TestPermIgnoresUmask(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report.md")
	if err := WriteFile(path, []byte("x"), Options{Perm: 0o644}); err != nil {
		t.Fatal(err)
	}
	checkFile(t, path, "x", 0o644)
}

func TestCreateFileRefusesExisting(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "key.pem")
	if err := CreateFile(path, []byte("first"), Options{}); err != nil {
		t.Fatal(err)
	}
	checkFile(t, path, "first", 0o600)
	err := CreateFile(path, []byte("second"), Options{})
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("a second CreateFile: %v, want fs.ErrExist", err)
	}
	checkFile(t, path, "first", 0o600)
	if l := leftovers(t, dir, "key.pem"); len(l) != 0 {
		t.Errorf("left behind: %v", l)
	}
}

// A file made after CreateFile's first check and before its link is not
// replaced: the link fails.
func TestLinkRefusesRacingFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "key.pem")
	tmp, err := CreateTemp(path, []byte("mine"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("theirs"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := tmp.Link(); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Link over a file: %v, want fs.ErrExist", err)
	}
	checkFile(t, path, "theirs", 0o600)
	if l := leftovers(t, dir, "key.pem"); len(l) != 0 {
		t.Errorf("left behind: %v", l)
	}
}

func TestCreateFileRefusesSymlink(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "victim")
	path := filepath.Join(dir, "key.pem")
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	if err := CreateFile(path, []byte("x"), Options{}); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("CreateFile over a dangling link: %v, want fs.ErrExist", err)
	}
	if _, err := os.Lstat(target); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the link's target was created (%v)", err)
	}
}

// A temporary name already taken, by a leftover file or a planted link,
// is never opened: another name is tried.
func TestTempNameTakenIsSkipped(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("theirs"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, DefaultTempName(path, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(DefaultTempName(path, "file"), []byte("a leftover"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("new"), Options{Random: names("link", "file")}); err != nil {
		t.Fatal(err)
	}
	checkFile(t, path, "new", 0o600)
	if b, _ := os.ReadFile(victim); string(b) != "theirs" {
		t.Errorf("the planted link's target now holds %q", b)
	}
	if b, _ := os.ReadFile(DefaultTempName(path, "file")); string(b) != "a leftover" {
		t.Errorf("the leftover now holds %q", b)
	}
}

func TestNoFreshNameGivesUp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	if err := os.WriteFile(DefaultTempName(path, "same"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	err := WriteFile(path, []byte("x"), Options{Random: func() string { return "same" }})
	if err == nil {
		t.Fatal("WriteFile found a fresh name where every one is taken")
	}
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the file was written (%v)", err)
	}
}

func TestTempName(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chain.state")
	var seen string
	opts := Options{TempName: func(p, r string) string {
		seen = p + "." + r + ".tmp"
		return seen
	}, Random: names("abc")}
	if err := WriteFile(path, []byte("x"), opts); err != nil {
		t.Fatal(err)
	}
	if seen != path+".abc.tmp" {
		t.Errorf("temporary name %q", seen)
	}
}

// Every step that fails leaves the old file as it was and no temporary
// file behind, and the error is the step's.
func TestFailureLeavesOldFile(t *testing.T) {
	for _, step := range []string{"write", "sync", "close", "place"} {
		for _, create := range []bool{false, true} {
			dir := t.TempDir()
			path := filepath.Join(dir, "f")
			if !create {
				if err := WriteFile(path, []byte("old"), Options{}); err != nil {
					t.Fatal(err)
				}
			}
			injected := errors.New("injected " + step)
			opts := Options{fail: func(s string) error {
				if s == step {
					return injected
				}
				return nil
			}}
			write := WriteFile
			if create {
				write = CreateFile
			}
			if err := write(path, []byte("new"), opts); !errors.Is(err, injected) {
				t.Fatalf("create=%v, %s fails: %v", create, step, err)
			}
			if create {
				if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("create, %s fails: the file exists (%v)", step, err)
				}
				if l := leftovers(t, dir); len(l) != 0 {
					t.Errorf("create, %s fails: left behind %v", step, l)
				}
				continue
			}
			checkFile(t, path, "old", 0o600)
			if l := leftovers(t, dir, "f"); len(l) != 0 {
				t.Errorf("%s fails: left behind %v", step, l)
			}
		}
	}
}

// A failed directory sync is reported; the file is in place by then.
func TestSyncDirFailureReported(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	injected := errors.New("injected")
	err := WriteFile(path, []byte("new"), Options{fail: func(s string) error {
		if s == "syncdir" {
			return injected
		}
		return nil
	}})
	if !errors.Is(err, injected) {
		t.Fatalf("WriteFile: %v, want the sync's error", err)
	}
	checkFile(t, path, "new", 0o600)
}

// A rename onto a directory fails, and the temporary file goes.
func TestRenameOntoDirectory(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "d")
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, "x"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("x"), Options{}); err == nil {
		t.Fatal("WriteFile replaced a directory")
	}
	if l := leftovers(t, dir, "d"); len(l) != 0 {
		t.Errorf("left behind: %v", l)
	}
}

func TestMissingDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "f")
	if err := WriteFile(path, []byte("x"), Options{}); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("WriteFile in a missing directory: %v", err)
	}
}

func TestRemoveTemps(t *testing.T) {
	dir := t.TempDir()
	stale := time.Now().Add(-time.Hour)
	for name, old := range map[string]bool{".a.tmp-1": true, ".a.tmp-2": false, ".b.tmp-3": true, "a": true} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if old {
			if err := os.Chtimes(p, stale, stale); err != nil {
				t.Fatal(err)
			}
		}
	}
	isA := func(e fs.DirEntry) bool { return len(e.Name()) > 7 && e.Name()[:7] == ".a.tmp-" }
	RemoveTemps(dir, isA, time.Minute)
	if got, want := leftovers(t, dir), []string{".a.tmp-2", ".b.tmp-3", "a"}; !slices.Equal(got, want) {
		t.Errorf("after removing stale ones: %v, want %v", got, want)
	}
	RemoveTemps(dir, isA, 0)
	if got, want := leftovers(t, dir), []string{".b.tmp-3", "a"}; !slices.Equal(got, want) {
		t.Errorf("after removing all: %v, want %v", got, want)
	}
}
