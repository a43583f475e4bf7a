package sidebyside

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// horcruxModule is the horcrux release compared against.
const horcruxModule = "github.com/strangelove-ventures/horcrux/v3@v3.3.2"

// once builds one binary once per test binary.
type once struct {
	sync.Once
	path string
	err  error
}

var (
	cmtBuild, horcruxBuild, skBuild once
	skBinDir                        string // removed by TestMain
)

func (o *once) get(t *testing.T, build func() (string, error)) string {
	t.Helper()
	o.Do(func() { o.path, o.err = build() })
	if o.err != nil {
		t.Fatal(o.err)
	}
	return o.path
}

// toolDir is where built node and horcrux binaries are kept between runs,
// under their module's version: the same place interop's tests keep theirs,
// so a CometBFT built by either is reused by the other.
func toolDir(modVersion string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "signerkit-interop-tools", strings.NewReplacer("/", "_", "@", "_").Replace(modVersion))
	return dir, os.MkdirAll(dir, 0o755)
}

// buildInto runs go build in dir with env, writing out atomically.
func buildInto(dir string, env []string, out, pkg string) error {
	tmp := fmt.Sprintf("%s.%d.tmp", out, os.Getpid())
	cmd := exec.Command("go", "build", "-o", tmp, pkg)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return os.Rename(tmp, out)
}

// cmtBin is the cometbft command of the CometBFT this module requires
// (v0.38.26).
func cmtBin(t *testing.T) string {
	return cmtBuild.get(t, func() (string, error) {
		const pkg = "github.com/cometbft/cometbft/cmd/cometbft"
		ver, err := exec.Command("go", "list", "-f", "{{.Module.Path}}@{{.Module.Version}}", pkg).Output()
		if err != nil {
			return "", fmt.Errorf("go list %s: %v", pkg, err)
		}
		dir, err := toolDir(strings.TrimSpace(string(ver)))
		if err != nil {
			return "", err
		}
		path := filepath.Join(dir, "cometbft")
		if _, err := os.Stat(path); err == nil {
			return path, nil
		}
		return path, buildInto(".", nil, path, pkg)
	})
}

// horcruxBin is horcrux's command, built from a copy of its module as the
// proxy serves it, with its own go.mod and go.sum (not this module's
// versions), as `go install` would build it.
func horcruxBin(t *testing.T) string {
	return horcruxBuild.get(t, func() (string, error) {
		dir, err := toolDir(horcruxModule)
		if err != nil {
			return "", err
		}
		path := filepath.Join(dir, "horcrux")
		if _, err := os.Stat(path); err == nil {
			return path, nil
		}
		b, err := exec.Command("go", "mod", "download", "-json", horcruxModule).Output()
		if err != nil {
			return "", fmt.Errorf("go mod download %s: %v", horcruxModule, err)
		}
		var m struct{ Dir string }
		if err := json.Unmarshal(b, &m); err != nil || m.Dir == "" {
			return "", fmt.Errorf("go mod download %s: no directory (%v)", horcruxModule, err)
		}
		src, err := os.MkdirTemp("", "horcrux-src-")
		if err != nil {
			return "", err
		}
		defer os.RemoveAll(src)
		if err := os.CopyFS(src, os.DirFS(m.Dir)); err != nil {
			return "", err
		}
		return path, buildInto(src, []string{"GOWORK=off", "GOFLAGS=-mod=mod"}, path, "./cmd/horcrux")
	})
}

// skBin is cmd/signerkit built from the main module (SIGNERKIT_BIN_DIR, when
// set, names a directory holding it already built).
func skBin(t *testing.T) string {
	return skBuild.get(t, func() (string, error) {
		if d := os.Getenv("SIGNERKIT_BIN_DIR"); d != "" {
			return filepath.Join(d, "signerkit"), nil
		}
		dir, err := os.MkdirTemp("", "signerkit-sidebyside-bin-")
		if err != nil {
			return "", err
		}
		skBinDir = dir
		path := filepath.Join(dir, "signerkit")
		return path, buildInto(filepath.Join("..", ".."), nil, path, "./cmd/signerkit")
	})
}

// run runs a command and returns its output, failing the test on error.
func run(t *testing.T, bin string, args ...string) string {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, out)
	}
	return string(out)
}

// execOut runs a command for at most 20 s and returns its output.
func execOut(bin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	return string(out), err
}
