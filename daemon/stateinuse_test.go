package daemon

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInitStateMakesDir: state init makes a missing state directory,
// 0700, and refuses to make a tree under a missing parent, saying how.
func TestInitStateMakesDir(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state")
	if err := InitState(context.Background(), dir, "c", 5); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("state dir: %v, %v", fi, err)
	}
	deep := filepath.Join(t.TempDir(), "typo", "state")
	err = InitState(context.Background(), deep, "c", 5)
	var se *StateDirError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "mkdir -p -m 0700 "+deep) {
		t.Fatalf("missing parent: %v", err)
	}
	if _, err := os.Stat(filepath.Dir(deep)); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("made the missing parent")
	}
}
