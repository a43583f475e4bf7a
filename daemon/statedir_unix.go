//go:build unix

package daemon

import (
	"io/fs"
	"syscall"
)

// fileOwner returns the uid that owns fi.
func fileOwner(fi fs.FileInfo) (int64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int64(st.Uid), true
}
