//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package guard

import "os"

// lockFile does nothing where there is no flock(2).
func lockFile(*os.File) error { return nil }
