//go:build cgo && unix

package pkcs11

import (
	"fmt"
	"os"
	"syscall"
)

// fileIdentity names the file fi describes whatever path reached it: its
// device and inode. ok is false when the system does not say.
func fileIdentity(_ string, fi os.FileInfo) (string, bool) {
	s, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("file:%d:%d", uint64(s.Dev), uint64(s.Ino)), true
}
