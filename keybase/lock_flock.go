//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package keybase

import "os"

// crossProcessLock says whether writers in other processes are locked out
// (internal/flock takes flock(2) locks here).
const crossProcessLock = true

// syncDir makes a rename or removal in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
