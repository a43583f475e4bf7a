//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package keybase

import "os"

// crossProcessLock says whether writers in other processes are locked out:
// here only writers sharing one Store are, through the Store's own lock.
// Renames are still atomic, so no file is ever half written.
const crossProcessLock = false

func tryLock(*os.File) (bool, error) { return true, nil }

func unlockFile(*os.File) error { return nil }

// syncDir does nothing where directories cannot be opened for syncing.
func syncDir(string) error { return nil }
