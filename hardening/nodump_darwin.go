package hardening

// noDump: macOS has no madvise advice that keeps pages out of a core
// file; DisableCoreDumps is the remedy there.
func noDump([]byte) bool { return false }
