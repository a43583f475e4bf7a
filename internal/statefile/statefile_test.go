package statefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// testFS checks an FS: a created file reads back and takes writes in
// place, a second Create of a name fails with fs.ErrExist, and a missing
// name is fs.ErrNotExist.
func testFS(t *testing.T, fsys FS) {
	t.Helper()
	if _, err := fsys.Open("x"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Open of a missing file: %v", err)
	}
	if err := fsys.Create("x", []byte("abc")); err != nil {
		t.Fatal(err)
	}
	if err := fsys.Create("x", nil); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second Create: %v", err)
	}
	f, err := fsys.Open("x")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte("Z"), 4); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 5)
	if n, _ := f.ReadAt(got, 0); n != 5 || string(got) != "abc\x00Z" {
		t.Fatalf("read back %q", got[:n])
	}
}

func TestMemFS(t *testing.T) { testFS(t, &MemFS{}) }

func TestDir(t *testing.T) {
	dir := t.TempDir()
	testFS(t, Dir(dir))
	fi, err := os.Stat(filepath.Join(dir, "x"))
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("a created file has mode %v, want 0600", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("the directory holds %d entries, want the file alone", len(entries))
	}
}

// A file open in one Dir cannot be opened again until it is closed, where
// the system has flock(2).
func TestDirLocks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no flock(2)")
	}
	d := Dir(t.TempDir())
	if err := d.Create("s", []byte("state")); err != nil {
		t.Fatal(err)
	}
	f, err := d.Open("s")
	if err != nil {
		t.Fatal(err)
	}
	if g, err := d.Open("s"); err == nil {
		g.Close()
		t.Fatal("a second Open of a locked file succeeded")
	}
	f.Close()
	g, err := d.Open("s")
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	g.Close()
}
