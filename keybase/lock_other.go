//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package keybase

// crossProcessLock says whether writers in other processes are locked out:
// here only writers sharing one Store are, through the Store's own lock.
// Renames are still atomic, so no file is ever half written.
const crossProcessLock = false
