package report

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// suiteFile is the real output of the whole suite at one iteration a
// row, as .ci/run makes it:
//
//	go test -run '^$' -bench . -benchtime 1x ./... > internal/report/testdata/suite-1x.txt
//
// (.ci/run also feeds its live output to signerbench on every run).
const suiteFile = "testdata/suite-1x.txt"

// TestParseWholeSuite: the output of go test -bench . ./... holds
// BenchmarkSign rows of other packages (guard's BenchmarkSign/disk, the
// threshold signer's, ed25519sign's) that once failed the parse ("level
// \"disk\" is not key=value"). They are left out, counted by package.
func TestParseWholeSuite(t *testing.T) {
	f, err := os.Open(suiteFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out, err := ParseBenchSuite(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Sign) == 0 || len(out.Verify) == 0 {
		t.Fatalf("%d sign and %d verification rows, want both", len(out.Sign), len(out.Verify))
	}
	byPath := map[string]bool{}
	for _, r := range out.Sign {
		byPath[r.Path()] = true
	}
	for _, want := range []string{"raw-ed25519", "inprocess-ed25519"} {
		if !byPath[want] {
			t.Errorf("no %s row among %d sign rows", want, len(out.Sign))
		}
	}
	for _, pkg := range []string{RegistryPackage + "/guard", RegistryPackage + "/threshold"} {
		if out.Other[pkg] == 0 {
			t.Errorf("no benchmark lines of %s counted as another package's: %v", pkg, out.Other)
		}
	}
	if n := out.Other[RegistryPackage]; n != 0 {
		t.Errorf("%d lines of the registry's package counted as another's", n)
	}
}

const suiteLike = `goos: linux
goarch: amd64
pkg: github.com/signerkit/signerkit
cpu: AMD EPYC 7B13
BenchmarkSign/backend=raw-ed25519/payload=32-2         	   14001	     19212 ns/op	         0.01921 e2e-ms/op
BenchmarkVerify/alg=ed25519/payload=32-2         	   14001	     50000 ns/op
PASS
ok  	github.com/signerkit/signerkit	12.3s
goos: linux
goarch: amd64
pkg: github.com/signerkit/signerkit/guard
cpu: AMD EPYC 7B13
BenchmarkSign/disk-2   	       1	    312345 ns/op
BenchmarkSign/mem-2    	       1	     12345 ns/op
PASS
ok  	github.com/signerkit/signerkit/guard	1.2s
pkg: github.com/signerkit/signerkit/threshold
BenchmarkSign/inflight=1-2   	       1	    312345 ns/op
ok  	github.com/signerkit/signerkit/threshold	1.2s
`

func TestParseSkipsOtherPackages(t *testing.T) {
	out, err := ParseBenchSuite(strings.NewReader(suiteLike))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Sign) != 1 || out.Sign[0].Path() != "raw-ed25519" || len(out.Verify) != 1 {
		t.Errorf("sign %+v, verify %+v; want the registry's one row of each", out.Sign, out.Verify)
	}
	if g, th := out.Other[RegistryPackage+"/guard"], out.Other[RegistryPackage+"/threshold"]; g != 2 || th != 1 {
		t.Errorf("other packages %v, want guard's 2 lines and threshold's 1", out.Other)
	}
}

// A garbled row of the registry's package still fails, naming the line
// and the package, whatever other packages' rows surround it; without
// pkg: lines every row is taken as the registry's.
func TestParseGarbledRegistryRowInSuite(t *testing.T) {
	bad := "BenchmarkSign/oops/payload=32-2 10 5 ns/op\n"
	for _, tc := range []struct{ in, want string }{
		{strings.Replace(suiteLike, "BenchmarkVerify/", bad+"BenchmarkVerify/", 1), `line 6 (github.com/signerkit/signerkit): benchmark "Sign/oops/payload=32"`},
		{suiteLike + "pkg: " + RegistryPackage + "\n" + bad, `line 21 (github.com/signerkit/signerkit)`},
		{"BenchmarkSign/disk-2 1 5 ns/op\n", `line 1: benchmark "Sign/disk": level "disk" is not key=value`},
	} {
		_, err := ParseBenchSuite(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want one containing %q", err, tc.want)
		}
	}
}

func TestPackageLines(t *testing.T) {
	got := string(PackageLines([]byte("BenchmarkX 1 1 ns/op\n"+suiteLike), RegistryPackage+"/guard"))
	want := "BenchmarkX 1 1 ns/op\ngoos: linux\ngoarch: amd64\ncpu: AMD EPYC 7B13\nBenchmarkSign/disk-2   \t       1\t    312345 ns/op\nBenchmarkSign/mem-2    \t       1\t     12345 ns/op\nPASS\nok  \tgithub.com/signerkit/signerkit/guard\t1.2s\n"
	if got != want {
		t.Errorf("PackageLines = %q, want %q", got, want)
	}
}

// RegistryPackage is the module's root package.
func TestRegistryPackageIsTheModule(t *testing.T) {
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^module\s+(\S+)`).FindSubmatch(mod)
	if m == nil || string(m[1]) != RegistryPackage {
		t.Fatalf("go.mod's module %q, RegistryPackage %q", m, RegistryPackage)
	}
}
