//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package keybase

// crossProcessLock says whether writers in other processes are locked out
// (internal/flock takes flock(2) locks here).
const crossProcessLock = true
