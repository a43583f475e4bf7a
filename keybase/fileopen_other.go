//go:build !unix

package keybase

import "io/fs"

// openFlags: this system has no O_NOFOLLOW or O_NONBLOCK for files.
// openFile checks for a symbolic link before it opens, and for a regular
// file after.
const openFlags = 0

// noFollow says whether openFlags refuse symbolic links themselves.
const noFollow = false

// checkOwner does nothing here: file ownership is not a uid (Windows), or
// not checked.
func checkOwner(string, fs.FileInfo) error { return nil }
