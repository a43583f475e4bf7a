package daemon

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/signerkit/signerkit/internal/atomicfile"
)

// tempName is the temporary name of a write of path: path.<random>.tmp,
// which removeStaleTemps knows.
func tempName(path, random string) string { return path + "." + random + ".tmp" }

// writeFileDurable replaces path by data durably, as atomicfile.WriteFile
// does (a fresh temporary name path.<suffix()>.tmp opened with O_EXCL and
// O_NOFOLLOW, mode 0600, synced, renamed into place; the temporary file
// removed when anything fails), but removes the stale temporary files
// crashed writes left before the directory sync, so that one sync makes
// both the rename and the removals durable.
func writeFileDurable(path string, data []byte, suffix func() string) error {
	t, err := atomicfile.CreateTemp(path, data, atomicfile.Options{TempName: tempName, Random: suffix})
	if err != nil {
		return err
	}
	if err := t.Rename(); err != nil {
		return err
	}
	removeStaleTemps(path)
	return atomicfile.SyncDir(filepath.Dir(path))
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
	base := filepath.Base(path)
	atomicfile.RemoveTemps(filepath.Dir(path), func(e fs.DirEntry) bool {
		mid, ok := strings.CutPrefix(e.Name(), base+".")
		return ok && strings.HasSuffix(mid, ".tmp") && mid != ".tmp" && mid != "tmp"
	}, staleTemp)
}
