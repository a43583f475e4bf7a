//go:build !unix && !windows

package gnokeyhome

// lockBusy reports whether err is goleveldb failing to take LOCK because
// another process holds it; where goleveldb takes no lock (plan9, wasm)
// it never is.
func lockBusy(error) bool { return false }
