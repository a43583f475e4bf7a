//go:build unix

package keybase

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// checkOwner refuses a key directory that the process's effective user
// does not own.
func checkOwner(dir string, fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if euid := os.Geteuid(); int64(st.Uid) != int64(euid) {
		return &FileError{Path: dir, Problem: FileForeignOwner, Detail: fmt.Sprintf("uid %d, not this process's effective uid %d", st.Uid, euid)}
	}
	return nil
}
