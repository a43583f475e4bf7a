//go:build !linux

package guard

import "os"

func datasync(f *os.File) error { return f.Sync() }
