package etcd

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// serverPkg is etcd v3.7.3's server command, pinned by go.mod.
const serverPkg = "go.etcd.io/etcd/server/v3"

// TestMain builds etcd v3.7.3 from its module (once; the binary is kept
// in the user's cache directory) and points etcdtest at it
// (SIGNERKIT_ETCD), so every cluster here runs that version.
func TestMain(m *testing.M) {
	bin, err := buildServer()
	if err != nil {
		fmt.Fprintln(os.Stderr, "building etcd v3.7.3:", err)
		os.Exit(1)
	}
	os.Setenv("SIGNERKIT_ETCD", bin)
	os.Setenv("SIGNERKIT_REQUIRE_ETCD", "1")
	os.Exit(m.Run())
}

func buildServer() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "signerkit-interop-tools", "go.etcd.io_etcd_server_v3_v3.7.3")
	bin := filepath.Join(dir, "etcd")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	part := fmt.Sprintf("%s.partial-%d", bin, os.Getpid())
	if out, err := exec.Command("go", "build", "-o", part, serverPkg).CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", serverPkg, err, out)
	}
	return bin, os.Rename(part, bin)
}
