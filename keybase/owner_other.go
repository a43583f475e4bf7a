//go:build !unix

package keybase

import "io/fs"

// checkOwner does nothing here: file ownership is not a uid (Windows), or
// not checked.
func checkOwner(string, fs.FileInfo) error { return nil }
