package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestReadBuildFacts: each fact comes from the build info the go command
// stamps, and an -ldflags stamp wins over it.
func TestReadBuildFacts(t *testing.T) {
	t.Parallel()
	bi := &debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"},
		{Key: "vcs.modified", Value: "true"}, {Key: "CGO_ENABLED", Value: "0"},
	}}
	f := readBuildFacts(bi, buildFacts{})
	if f.Version != "v1.2.3" || f.Revision != "0123abcd" || f.Time != "2026-01-02T03:04:05Z" || f.Modified != "true" ||
		f.Cgo != "0" || f.GoVersion != "go1.26.1" {
		t.Errorf("from build info: %+v", f)
	}
	var b bytes.Buffer
	f.write(&b)
	for _, want := range []string{"signerkit v1.2.3\n", "revision  0123abcd\n", "dirty     yes", "cgo       off", "go        go1.26.1 "} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("printed facts lack %q:\n%s", want, b.String())
		}
	}
	f = readBuildFacts(bi, buildFacts{Version: "v9.9.9", Revision: "ffff", Time: "2027-01-01T00:00:00Z", Modified: "false"})
	if f.Version != "v9.9.9" || f.Revision != "ffff" || f.Time != "2027-01-01T00:00:00Z" || f.Modified != "false" || f.Cgo != "0" {
		t.Errorf("stamped: %+v", f)
	}
	b.Reset()
	readBuildFacts(nil, buildFacts{}).write(&b)
	for _, want := range []string{"signerkit (devel)\n", "revision  unknown", "dirty     unknown", "cgo       unknown"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no build info: printed facts lack %q:\n%s", want, b.String())
		}
	}
}

// versionFacts runs bin version and returns its "key value" lines, the
// first line's version as "version".
func versionFacts(t *testing.T, bin string, env ...string) map[string]string {
	t.Helper()
	cmd := exec.Command(bin, "version")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s version: %v", bin, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	facts := map[string]string{"version": strings.TrimPrefix(lines[0], "signerkit ")}
	for _, l := range lines[1:] {
		k, v, _ := strings.Cut(strings.TrimSpace(l), " ")
		facts[k] = strings.TrimSpace(v)
	}
	return facts
}

func goEnv(t *testing.T, key string) string {
	t.Helper()
	out, err := exec.Command("go", "env", key).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", key, err)
	}
	return strings.TrimSpace(string(out))
}

func gitOut(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		t.Skipf("git %v: %v (not a git checkout?)", args, err)
	}
	return strings.TrimSpace(string(out))
}

// goBuild builds the command with env and flags into a temporary file.
func goBuild(t *testing.T, env []string, flags ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "signerkit")
	cmd := exec.Command("go", append(append([]string{"build", "-o", bin}, flags...), ".")...)
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %v: %v\n%s", flags, err, out)
	}
	return bin
}

// TestVersion: the built command prints the toolchain's Go version and
// cgo as the build had it; a CGO_ENABLED=0 build stamped as make install
// and make dist stamp it (scripts/version-ldflags.sh) says cgo off and
// prints git's revision, commit time and dirtiness.
func TestVersion(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the command twice more")
	}
	facts := versionFacts(t, signerkit(t))
	if want := goEnv(t, "GOVERSION"); !strings.HasPrefix(facts["go"], want+" ") {
		t.Errorf("go %q, want %s", facts["go"], want)
	}
	if want := map[string]string{"1": "on:", "0": "off:"}[goEnv(t, "CGO_ENABLED")]; !strings.HasPrefix(facts["cgo"], want) {
		t.Errorf("cgo %q, want %s…", facts["cgo"], want)
	}

	head := gitOut(t, "rev-parse", "HEAD")
	commitUnix, err := strconv.ParseInt(gitOut(t, "log", "-1", "--format=%ct", "HEAD"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	ldflags, err := exec.Command("../../scripts/version-ldflags.sh").Output()
	if err != nil {
		t.Fatalf("scripts/version-ldflags.sh: %v", err)
	}
	dirty := gitOut(t, "status", "--porcelain") != ""
	bin := goBuild(t, []string{"CGO_ENABLED=0"}, "-ldflags="+strings.TrimSpace(string(ldflags)))
	facts = versionFacts(t, bin)
	if !strings.HasPrefix(facts["cgo"], "off:") {
		t.Errorf("CGO_ENABLED=0 build: cgo %q", facts["cgo"])
	}
	if facts["revision"] != head {
		t.Errorf("revision %q, want HEAD %s", facts["revision"], head)
	}
	if when, err := time.Parse(time.RFC3339, facts["time"]); err != nil || when.Unix() != commitUnix {
		t.Errorf("time %q (%v), want the commit's, %s", facts["time"], err, time.Unix(commitUnix, 0).UTC())
	}
	if got := strings.HasPrefix(facts["dirty"], "yes"); got != dirty || strings.HasSuffix(facts["version"], "+dirty") != dirty {
		t.Errorf("dirty %q, version %q; git status says dirty=%v", facts["dirty"], facts["version"], dirty)
	}
	pseudo := regexp.MustCompile(`^v\d+\.\d+\.\d+(-0?\.?\d{14}-` + head[:12] + `)?(\+dirty)?$`)
	if !pseudo.MatchString(facts["version"]) {
		t.Errorf("version %q is not a tag nor a pseudo-version of %s", facts["version"], head[:12])
	}
}

// TestVersionBuildVCS: with no stamps, the go command's own VCS facts are
// printed; it stamps none in a git worktree (.git a file), so the test
// needs a clone.
func TestVersionBuildVCS(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the command")
	}
	top := gitOut(t, "rev-parse", "--show-toplevel")
	if st, err := os.Stat(filepath.Join(top, ".git")); err != nil || !st.IsDir() {
		t.Skip("a git worktree: the go command stamps no VCS facts in one")
	}
	head := gitOut(t, "rev-parse", "HEAD")
	facts := versionFacts(t, goBuild(t, []string{"GOFLAGS=-buildvcs=true"}))
	if facts["revision"] != head || facts["time"] == "unknown" || facts["dirty"] == "unknown" {
		t.Errorf("buildvcs facts %v, want revision %s", facts, head)
	}
}
