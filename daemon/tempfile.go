package daemon

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/signerkit/signerkit/internal/fileopen"
)

// randomSuffix returns the random part of a temporary file's name.
func randomSuffix() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// tempAttempts bounds how many fresh names createTemp tries.
const tempAttempts = 8

// createTemp creates a new temporary file next to path, named
// path.<suffix()>.tmp, for writing only, with mode 0600. The open has
// O_CREATE|O_EXCL and O_NOFOLLOW: it never opens a file or a symbolic link
// that is already there (a leftover, or a link planted to make the write
// land elsewhere) but tries another name.
func createTemp(path string, suffix func() string) (*os.File, string, error) {
	for range tempAttempts {
		tmp := path + "." + suffix() + ".tmp"
		f, _, err := fileopen.Open(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600, fileopen.NoFollow)
		if err == nil {
			return f, tmp, nil
		}
		if !errors.Is(err, fs.ErrExist) && !errors.Is(err, fileopen.ErrSymlink) {
			return nil, "", err
		}
	}
	return nil, "", fmt.Errorf("no fresh temporary name for %s in %d tries: something keeps creating files or links in %s", path, tempAttempts, filepath.Dir(path))
}

// writeFileDurable replaces path by data durably. The data goes to a new
// temporary file (createTemp: a fresh name, O_EXCL, O_NOFOLLOW, mode
// 0600), which is synced and renamed into place, and the directory is
// synced. The temporary file is removed when anything fails, and stale
// ones that crashed writes left are removed after a write.
func writeFileDurable(path string, data []byte, suffix func() string) (err error) {
	f, tmp, err := createTemp(path, suffix)
	if err != nil {
		return err
	}
	renamed := false
	defer func() {
		if err != nil && !renamed {
			_ = os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	renamed = true
	removeStaleTemps(path)
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// staleTemp is how old a temporary file must be before removeStaleTemps
// removes it: no write takes that long, so it was left by a process that
// died between creating and renaming it, not by one writing now.
const staleTemp = time.Minute

// removeStaleTemps removes the temporary files that writes of path left
// behind: path.tmp, the fixed name of earlier versions, whatever its age,
// and path.*.tmp older than staleTemp. Removing a symbolic link removes
// the link, never its target. Errors are ignored: a leftover is clutter,
// never read.
func removeStaleTemps(path string) {
	_ = os.Remove(path + ".tmp")
	dir, base := filepath.Dir(path), filepath.Base(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		mid, ok := strings.CutPrefix(name, base+".")
		if !ok || !strings.HasSuffix(mid, ".tmp") || mid == ".tmp" || mid == "tmp" {
			continue
		}
		fi, err := e.Info() // of the entry itself: a link is not followed
		if err != nil || time.Since(fi.ModTime()) < staleTemp {
			continue
		}
		_ = os.Remove(filepath.Join(dir, name))
	}
}
