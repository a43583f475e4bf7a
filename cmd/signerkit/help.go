package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Help and usage. The usage text in main.go is the one list of commands:
// each line "signerkit CMD [SUB] SYNOPSIS" makes CMD (and CMD SUB) known,
// so that an unknown subcommand is refused before any flag is parsed or
// config loaded, `signerkit CMD -h` lists CMD's subcommands, and
// `signerkit CMD SUB -h` prints that line and SUB's own flags. A command
// makes its flag set with newFlags("CMD SUB", stderr), defines only its
// own flags on it, and parses with parseFlags, returning its error: -h,
// -help and --help then exit 0 with the help on stdout, and a bad flag
// exits 2 with it on stderr. TestHelp checks every line of usage.

// helpWords ask for help in place of a subcommand or a flag.
var helpWords = []string{"-h", "-help", "--help", "help"}

// helpError carries the help a command was asked for; run prints it to
// stdout and returns nil (exit 0).
type helpError struct{ text string }

func (e *helpError) Error() string { return "help requested" }

// usageLine is one line of usage.
type usageLine struct {
	cmd, sub string // "keys", "show"; sub is "" for a command without subcommands
	synopsis string // its flags and arguments, as usage shows them
}

// usageLines parses usage: after "signerkit", a command, then a
// subcommand when the next word is a plain lower-case word.
func usageLines() []usageLine {
	var lines []usageLine
	for _, l := range strings.Split(usage, "\n") {
		w := strings.Fields(l)
		if len(w) < 2 || w[0] != "signerkit" {
			continue
		}
		u := usageLine{cmd: w[1]}
		rest := w[2:]
		if len(rest) > 0 && isWord(rest[0]) {
			u.sub, rest = rest[0], rest[1:]
		}
		u.synopsis = strings.Join(rest, " ")
		lines = append(lines, u)
	}
	return lines
}

func isWord(s string) bool {
	for _, r := range s {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return s != ""
}

// subcommands returns cmd's subcommands, in usage's order (none for a
// command that has none, or is unknown).
func subcommands(cmd string) []string {
	var subs []string
	for _, u := range usageLines() {
		if u.cmd == cmd && u.sub != "" {
			subs = append(subs, u.sub)
		}
	}
	return subs
}

// groupUsage is usage's lines of cmd.
func groupUsage(cmd string) string {
	var b strings.Builder
	for _, u := range usageLines() {
		if u.cmd == cmd {
			fmt.Fprintf(&b, "  %s\n", strings.Join(strings.Fields("signerkit "+u.cmd+" "+u.sub+" "+u.synopsis), " "))
		}
	}
	return b.String()
}

// run runs the command args names, printing the help a command was asked
// for to stdout.
func run(args []string, stdout, stderr io.Writer) error {
	err := route(args, stdout, stderr)
	if he, ok := errors.AsType[*helpError](err); ok {
		fmt.Fprint(stdout, he.text)
		return nil
	}
	return err
}

// route answers `signerkit help [CMD [SUB]]`, `signerkit CMD` and
// `signerkit CMD -h` for a command with subcommands, and refuses an unknown
// subcommand, all before the command parses a flag or loads a config;
// anything else it leaves to dispatch.
func route(args []string, stdout, stderr io.Writer) error {
	if len(args) > 1 && args[0] == "help" {
		return route(append(slices.Clone(args[1:]), "-h"), stdout, stderr)
	}
	if len(args) == 0 {
		return dispatch(args, stdout, stderr)
	}
	cmd := args[0]
	subs := subcommands(cmd)
	switch {
	case len(subs) == 0:
		return dispatch(args, stdout, stderr)
	case len(args) == 1:
		fmt.Fprintf(stderr, "signerkit %s: which one? %s\n\n%s", cmd, strings.Join(subs, ", "), groupUsage(cmd))
		return errUsage
	case slices.Contains(helpWords, args[1]):
		return &helpError{fmt.Sprintf("signerkit %s: %s\n\n%s\n`signerkit %s SUBCOMMAND -h` shows its flags.\n",
			cmd, strings.Join(subs, ", "), groupUsage(cmd), cmd)}
	case !slices.Contains(subs, args[1]):
		fmt.Fprintf(stderr, "signerkit %s: unknown subcommand %q: %s\n\n%s", cmd, args[1], strings.Join(subs, ", "), groupUsage(cmd))
		return errUsage
	}
	return dispatch(args, stdout, stderr)
}

// parseFlags parses args with fs, made by newFlags. Asked for help, it
// returns a *helpError with fs's help (run prints it, exit 0); on a bad
// flag, it prints the flag package's message and fs's help to stderr and
// returns errUsage (exit 2).
func parseFlags(fs *flag.FlagSet, args []string) error {
	usage := fs.Usage
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.Usage = usage
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		return &helpError{flagHelp(fs)}
	}
	usage()
	return errUsage
}

// flagHelp is fs's usage line and its flags.
func flagHelp(fs *flag.FlagSet) string {
	var b bytes.Buffer
	line := fs.Name()
	for _, u := range usageLines() {
		if strings.Join(strings.Fields("signerkit "+u.cmd+" "+u.sub), " ") == fs.Name() {
			line = strings.Join(strings.Fields(line+" "+u.synopsis), " ")
		}
	}
	fmt.Fprintf(&b, "usage: %s\n", line)
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		return b.String()
	}
	b.WriteString("\nflags:\n")
	out := fs.Output()
	fs.SetOutput(&b)
	fs.PrintDefaults()
	fs.SetOutput(out)
	return b.String()
}

// exitCode is the exit status of err, run's result: 0, 2 for bad usage,
// else 1.
func exitCode(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errUsage) || errors.Is(err, flag.ErrHelp):
		return 2
	}
	return 1
}
