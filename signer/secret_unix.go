//go:build unix

package signer

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// checkSecretFileOwner refuses a secret file that its group or others may
// read or write, or that someone other than the effective user or root
// owns: either could have read or replaced the secret.
func checkSecretFileOwner(path string, fi fs.FileInfo) error {
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("signer: secret file %s has mode %04o, which lets its group or others use it: make it 0600 or 0400 (chmod go= %s): %w", path, perm, path, ErrPermissionDenied)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if uid := os.Geteuid(); int(st.Uid) != uid && st.Uid != 0 {
		return fmt.Errorf("signer: secret file %s is owned by uid %d, not by this process's user (uid %d) or root: %w", path, st.Uid, uid, ErrPermissionDenied)
	}
	return nil
}
