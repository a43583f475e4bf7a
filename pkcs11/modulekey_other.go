//go:build cgo && !unix

package pkcs11

import (
	"os"
	"path/filepath"
)

// fileIdentity names the file at path whatever path reached it: the path
// with every symbolic link resolved. ok is false when it cannot be resolved.
func fileIdentity(path string, _ os.FileInfo) (string, bool) {
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", false
	}
	if abs, err := filepath.Abs(resolved); err == nil {
		resolved = abs
	}
	return "path:" + resolved, true
}
