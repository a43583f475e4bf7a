//go:build !unix

package daemon

// openFileLimit returns 0: no descriptor limit is known.
func openFileLimit() uint64 { return 0 }
