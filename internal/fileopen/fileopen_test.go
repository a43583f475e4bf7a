package fileopen

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, fi, err := Open(file, os.O_RDONLY, 0, NoFollow)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != 1 {
		t.Fatalf("a regular file: %v, %v", fi, err)
	}
	f.Close()
	if _, _, err := Open(filepath.Join(dir, "missing"), os.O_RDONLY, 0, NoFollow); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v, want fs.ErrNotExist", err)
	}
	var nr *NotRegularError
	if _, _, err := Open(dir, os.O_RDONLY, 0, Follow); !errors.As(err, &nr) || !nr.Mode.IsDir() {
		t.Errorf("a directory: %v, want *NotRegularError", err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(file, link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	if _, _, err := Open(link, os.O_RDONLY, 0, NoFollow); !errors.Is(err, ErrSymlink) {
		t.Errorf("a link with NoFollow: %v, want ErrSymlink", err)
	}
	f, _, err = Open(link, os.O_RDONLY, 0, Follow)
	if err != nil {
		t.Fatalf("a link with Follow: %v", err)
	}
	f.Close()
}
