//go:build !linux

package statefile

import "os"

func datasync(f *os.File) error { return f.Sync() }
