//go:build !linux && !darwin && !freebsd

package hardening

// DisableCoreDumps returns ErrUnsupported: this system offers no switch
// this package knows (on Windows, Windows Error Reporting's LocalDumps
// settings, which are the administrator's, decide whether a crash dump is
// written).
func DisableCoreDumps() error { return ErrUnsupported }

func allocPages(int) *Buffer { return nil }

func freePages(*Buffer) {}
