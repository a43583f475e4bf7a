package benchtime

import (
	"flag"
	"testing"
)

// TestDefault: the test binary's own -benchtime flag is set to the default
// when the command line left it alone, and kept when it did not.
func TestDefault(t *testing.T) {
	f := flag.Lookup("test.benchtime")
	if f == nil {
		t.Fatal("no test.benchtime flag")
	}
	old := f.Value.String()
	t.Cleanup(func() { f.Value.Set(old) })
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.benchtime" })
	if set {
		if Default("7ms") || f.Value.String() == "7ms" {
			t.Fatalf("a -benchtime from the command line was replaced by %s", f.Value)
		}
		return
	}
	if !Default("7ms") || f.Value.String() != "7ms" {
		t.Fatalf("benchtime %s, want the default 7ms", f.Value)
	}
}

// TestParallel: -parallel is set to n when the command line left it
// alone, and kept when it did not.
func TestParallel(t *testing.T) {
	f := flag.Lookup("test.parallel")
	if f == nil {
		t.Fatal("no test.parallel flag")
	}
	old := f.Value.String()
	t.Cleanup(func() { f.Value.Set(old) })
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if set {
		if Parallel(7) || f.Value.String() == "7" {
			t.Fatalf("a -parallel from the command line was replaced by %s", f.Value)
		}
		return
	}
	if !Parallel(7) || f.Value.String() != "7" {
		t.Fatalf("parallel %s, want the default 7", f.Value)
	}
}
