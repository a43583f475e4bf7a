//go:build !unix

package atomicfile

// syncDir does nothing where directories cannot be opened for syncing.
func syncDir(string) error { return nil }
