//go:build unix

package daemon

import (
	"context"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestUnixListener: a tm2-remote validator on a Unix socket replaces only
// a stale socket at its path — a regular file, a symlink or a live socket
// there makes New fail and is left as it was — and its socket is 0600
// whatever the umask.
func TestUnixListener(t *testing.T) {
	old := syscall.Umask(0o022) // the usual umask: a socket would be 0755
	t.Cleanup(func() { syscall.Umask(old) })
	dir := t.TempDir()
	keyPath, _ := writeKey(t, dir, 3)
	sock := filepath.Join(shortDir(t), "s")
	cfg := newConfig(t, dir, keyPath, ProtocolTM2Remote, "unix://"+sock)
	if err := InitState(context.Background(), cfg.StateDir, chainID, 1); err != nil {
		t.Fatal(err)
	}
	refused := func(want string) {
		t.Helper()
		d, err := New(context.Background(), cfg, Options{})
		if err == nil {
			d.Close()
			t.Fatalf("New started with %s at the socket's path", want)
		}
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("New: %v, want an error with %q", err, want)
		}
	}

	// A regular file.
	if err := os.WriteFile(sock, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	refused("is not a socket (a regular file)")
	if b, err := os.ReadFile(sock); err != nil || string(b) != "precious" {
		t.Fatalf("the file at the socket's path: %q, %v", b, err)
	}
	if err := os.Remove(sock); err != nil {
		t.Fatal(err)
	}

	// A symlink, even to a socket.
	target := filepath.Join(shortDir(t), "t")
	tl, err := net.Listen("unix", target)
	if err != nil {
		t.Fatal(err)
	}
	tl.(*net.UnixListener).SetUnlinkOnClose(false)
	tl.Close()
	if err := os.Symlink(target, sock); err != nil {
		t.Fatal(err)
	}
	refused("is not a socket (a symbolic link)")
	if fi, err := os.Lstat(sock); err != nil || fi.Mode().Type() != fs.ModeSymlink {
		t.Fatalf("the symlink: %v, %v", fi, err)
	}
	if fi, err := os.Lstat(target); err != nil || fi.Mode().Type() != fs.ModeSocket {
		t.Fatalf("the symlink's target: %v, %v", fi, err)
	}
	if err := os.Remove(sock); err != nil {
		t.Fatal(err)
	}

	// A socket another process listens on.
	live, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	refused("another process is listening on")
	live.Close()

	// A stale socket, left by an earlier run: replaced, and the new one
	// is 0600.
	stale, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	stale.Close()
	d, err := New(context.Background(), cfg, Options{})
	if err != nil {
		t.Fatalf("New over a stale socket: %v", err)
	}
	defer d.Close()
	fi, err := os.Lstat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Type() != fs.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the socket is %v, want a socket with mode 0600", fi.Mode())
	}
	if m := syscall.Umask(0o022); m != 0o022 {
		t.Fatalf("the umask is %#o after New, was 022", m)
	}
}
