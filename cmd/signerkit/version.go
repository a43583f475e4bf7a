package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// Stamped by make install and make dist with -ldflags "-X main.version=…
// -X main.revision=… -X main.revisionTime=… -X main.modified=true|false",
// from git: the go command stamps no VCS facts with -buildvcs=false nor in a
// git worktree. Each one left empty is read from the build info instead.
var (
	version      = ""
	revision     = ""
	revisionTime = ""
	modified     = ""
)

// buildFacts is what `signerkit version` prints.
type buildFacts struct {
	Version   string // the module version, or "(devel)"
	Revision  string // the VCS commit, or ""
	Time      string // the commit's time, RFC 3339, or ""
	Modified  string // "true", "false", or "" when unknown
	GoVersion string
	Platform  string // GOOS/GOARCH
	Cgo       string // "1", "0", or "" when unknown
}

// stamps are the facts -ldflags set.
func stamps() buildFacts {
	return buildFacts{Version: version, Revision: revision, Time: revisionTime, Modified: modified}
}

// readBuildFacts takes each fact from stamp where it is set, else from bi
// (nil when the binary carries no build info).
func readBuildFacts(bi *debug.BuildInfo, stamp buildFacts) buildFacts {
	f := buildFacts{Version: "(devel)", GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi != nil {
		if bi.Main.Version != "" {
			f.Version = bi.Main.Version
		}
		if bi.GoVersion != "" {
			f.GoVersion = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				f.Revision = s.Value
			case "vcs.time":
				f.Time = s.Value
			case "vcs.modified":
				f.Modified = s.Value
			case "CGO_ENABLED":
				f.Cgo = s.Value
			}
		}
	}
	for _, st := range []struct{ stamp, fact *string }{
		{&stamp.Version, &f.Version}, {&stamp.Revision, &f.Revision}, {&stamp.Time, &f.Time}, {&stamp.Modified, &f.Modified},
	} {
		if *st.stamp != "" {
			*st.fact = *st.stamp
		}
	}
	return f
}

// buildVersion is the version the daemon logs and serves as a metric.
func buildVersion() string {
	bi, _ := debug.ReadBuildInfo()
	return readBuildFacts(bi, stamps()).Version
}

// write prints f, one fact a line.
func (f buildFacts) write(w io.Writer) {
	rev, when := f.Revision, f.Time
	if rev == "" {
		rev = "unknown (built without VCS stamps: a module download, -buildvcs=false or a git worktree)"
	}
	if when == "" {
		when = "unknown"
	}
	dirty := map[string]string{"true": "yes: built from a tree with uncommitted changes", "false": "no"}[f.Modified]
	if dirty == "" {
		dirty = "unknown"
	}
	cgo := map[string]string{
		"1": "on: a Ledger over USB and PKCS#11 tokens work",
		"0": "off: no Ledger over USB (Speculos works), no PKCS#11 tokens",
	}[f.Cgo]
	if cgo == "" {
		cgo = "unknown"
	}
	fmt.Fprintf(w, "signerkit %s\n", f.Version)
	lines := [][2]string{{"revision", rev}, {"time", when}, {"dirty", dirty}, {"go", f.GoVersion + " " + f.Platform}, {"cgo", cgo}}
	for _, l := range lines {
		fmt.Fprintf(w, "  %-9s %s\n", l[0], l[1])
	}
}

// cmdVersion prints the build's facts.
func cmdVersion(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("version", stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "signerkit version: takes no arguments, got %q\n", strings.Join(fs.Args(), " "))
		return errUsage
	}
	bi, _ := debug.ReadBuildInfo()
	readBuildFacts(bi, stamps()).write(stdout)
	return nil
}
