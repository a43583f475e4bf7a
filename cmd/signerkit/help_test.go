package main

import (
	"bytes"
	"errors"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// runIn runs args in process and returns its exit status, stdout and
// stderr.
func runIn(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	err := run(args, &out, &errb)
	return exitCode(err), out.String(), errb.String()
}

var (
	shownFlag    = regexp.MustCompile(`(?m)^  -([a-z][a-z0-9-]*)`)
	synopsisFlag = regexp.MustCompile(`(?:^|[\s\[|])-([a-z][a-z0-9-]*)`)
)

func flagNames(re *regexp.Regexp, s string) []string {
	var names []string
	for _, m := range re.FindAllStringSubmatch(s, -1) {
		names = append(names, m[1])
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// TestHelp: for every line of usage, -h, -help and --help exit 0 with
// that command's usage line on stdout and exactly the flags the line
// names (no other subcommand's), having loaded no config (the test's
// directory has no signerkit.toml, so a load would fail).
func TestHelp(t *testing.T) {
	t.Parallel()
	lines := usageLines()
	if len(lines) < 10 {
		t.Fatalf("usage parsed into %d lines: %+v", len(lines), lines)
	}
	for _, u := range lines {
		cmd := strings.Fields(u.cmd + " " + u.sub)
		for _, h := range []string{"-h", "-help", "--help"} {
			code, out, errOut := runIn(append(slices.Clone(cmd), h)...)
			name := strings.Join(append(slices.Clone(cmd), h), " ")
			if code != 0 || errOut != "" {
				t.Errorf("signerkit %s: exit %d, stderr %q", name, code, errOut)
				continue
			}
			if u.cmd == "help" {
				if out != usage {
					t.Errorf("signerkit %s: %q, want the usage", name, out)
				}
				continue
			}
			want := "usage: " + strings.Join(strings.Fields("signerkit "+u.cmd+" "+u.sub+" "+u.synopsis), " ") + "\n"
			if !strings.HasPrefix(out, want) {
				t.Errorf("signerkit %s: starts %q, want %q", name, firstLine(out), want)
			}
			if got, want := flagNames(shownFlag, out), flagNames(synopsisFlag, u.synopsis); !slices.Equal(got, want) {
				t.Errorf("signerkit %s shows flags %v; its usage line names %v", name, got, want)
			}
		}
	}
}

func firstLine(s string) string { return strings.SplitN(s, "\n", 2)[0] + "\n" }

// TestHelpGroups: a command with subcommands lists them for -h, help and
// `signerkit help CMD`, exit 0; named alone it lists them, exit 2; an
// unknown subcommand is refused, exit 2, before its flags are parsed or
// a config loaded.
func TestHelpGroups(t *testing.T) {
	t.Parallel()
	groups := map[string]bool{}
	for _, u := range usageLines() {
		if u.sub != "" {
			groups[u.cmd] = true
		}
	}
	for _, g := range []string{"keys", "state"} {
		if !groups[g] {
			t.Fatalf("usage has no subcommands of %s", g)
		}
	}
	for g := range groups {
		subs := subcommands(g)
		for _, args := range [][]string{{g, "-h"}, {g, "--help"}, {g, "help"}, {"help", g}} {
			code, out, errOut := runIn(args...)
			if code != 0 || errOut != "" {
				t.Errorf("signerkit %v: exit %d, stderr %q", args, code, errOut)
			}
			for _, s := range subs {
				if !strings.Contains(out, "signerkit "+g+" "+s) {
					t.Errorf("signerkit %v does not list %s:\n%s", args, s, out)
				}
			}
		}
		if code, _, errOut := runIn(g); code != 2 || !strings.Contains(errOut, strings.Join(subs, ", ")) {
			t.Errorf("signerkit %s: exit %d, stderr %q", g, code, errOut)
		}
		code, _, errOut := runIn(g, "bogus", "-config", "/nonexistent/signerkit.toml")
		if code != 2 || !strings.Contains(errOut, `unknown subcommand "bogus"`) || strings.Contains(errOut, "nonexistent") {
			t.Errorf("signerkit %s bogus: exit %d, stderr %q", g, code, errOut)
		}
	}
	for _, h := range []string{"-h", "-help", "--help", "help"} {
		if code, out, _ := runIn(h); code != 0 || out != usage {
			t.Errorf("signerkit %s: exit %d, %q", h, code, out)
		}
	}
	if code, _, errOut := runIn("bogus"); code != 2 || !strings.Contains(errOut, `unknown command "bogus"`) {
		t.Errorf("signerkit bogus: exit %d, stderr %q", code, errOut)
	}
}

// TestHelpBadFlag: a flag another subcommand takes is refused, exit 2,
// with the usage on stderr.
func TestHelpBadFlag(t *testing.T) {
	t.Parallel()
	code, out, errOut := runIn("state", "show", "-height", "5")
	if code != 2 || out != "" || !strings.Contains(errOut, "not defined: -height") || !strings.Contains(errOut, "usage: signerkit state show") {
		t.Errorf("state show -height: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, _, errOut := runIn("version", "extra"); code != 2 || !strings.Contains(errOut, "takes no arguments") {
		t.Errorf("version extra: exit %d, stderr %q", code, errOut)
	}
}

// TestHelpBinary: the built command, run where there is no config, exits
// 0 for help and 2 for an unknown subcommand.
func TestHelpBinary(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"state", "-h"}, 0, "signerkit state show"},
		{[]string{"state", "show", "-h"}, 0, "-config"},
		{[]string{"keys", "show", "--help"}, 0, "usage: signerkit keys show"},
		{[]string{"start", "-help"}, 0, "usage: signerkit start"},
		{[]string{"state", "nope"}, 2, `unknown subcommand "nope"`},
		{[]string{"keys", "show", "-nope"}, 2, "usage: signerkit keys show"},
	} {
		cmd := exec.Command(signerkit(t), c.args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := errors.AsType[*exec.ExitError](err); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != c.code || !strings.Contains(string(out), c.out) || strings.Contains(string(out), "signerkit.toml:") {
			t.Errorf("signerkit %v: exit %d, want %d with %q:\n%s", c.args, code, c.code, c.out, out)
		}
	}
}
