package daemon

import (
	"errors"
	"fmt"
	"github.com/signerkit/signerkit/internal/fileopen"
	"io/fs"
	"net"
	"os"
	"time"
)

// listenUnix listens on the Unix socket path, which only this user may
// connect to: a Unix socket has no allowlist, so its mode is its access
// control. The socket is created under a umask of 077 where the platform
// has one (no moment with a looser mode) and chmodded 0600 as well.
//
// A socket left at path by an earlier run is removed first. Anything else
// at path — a regular file, a directory, a symlink, or a socket another
// process is listening on — is never removed: listenUnix refuses, naming
// it.
func listenUnix(path string) (net.Listener, error) {
	fi, err := os.Lstat(path)
	switch {
	case err == nil && fi.Mode().Type() == fs.ModeSocket:
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			_ = c.Close()
			return nil, fmt.Errorf("%s is a socket another process is listening on: stop it, or choose another addr", path)
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("removing the stale socket %s: %w", path, err)
		}
	case err == nil:
		return nil, fmt.Errorf("%s exists and is not a socket (%s): signerkit removes only a socket an earlier run left there; "+
			"move it away or choose another addr", path, fileopen.TypeName(fi.Mode()))
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	ln, err := listenPrivate("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("chmod 600 %s: %w", path, err)
	}
	return ln, nil
}
