package daemon

import (
	"bufio"
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/signerkit/signerkit/privval"
	"github.com/signerkit/signerkit/privval/privvaltest"
	"github.com/signerkit/signerkit/signbytes"
)

// EnvSoak, set to a number of signs, runs TestSoakRSS: a soak run on
// demand, not in CI (1,000,000 signs take about a minute on two cores).
const EnvSoak = "SIGNERKIT_SOAK"

// rssKiB returns the process's resident set size (VmRSS), in KiB.
func rssKiB(t *testing.T) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// TestSoakRSS signs SIGNERKIT_SOAK prevotes at rising heights through the
// daemon (a validator played by privvaltest over a Unix socket, the state
// on disk, every metric live) and checks that the resident set grows by
// at most 5 MB from the end of a warm-up (a tenth of the run) to the end.
func TestSoakRSS(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv(EnvSoak))
	if n <= 0 {
		t.Skipf("set %s=1000000 to run the soak", EnvSoak)
	}
	f := newFixture(t, ProtocolTM2TMKMS, privval.GnoTMKMS)
	ctx := context.Background()
	b := block(1, 1)
	warm := n / 10
	var base int64
	start := time.Now()
	for h := int64(1); h <= int64(n); h++ {
		if _, err := f.c.SignVote(ctx, chainID, &privvaltest.Vote{Phase: signbytes.Prevote, Height: h, BlockID: b, Timestamp: baseTime}); err != nil {
			t.Fatalf("height %d: %v", h, err)
		}
		if h == int64(warm) {
			runtime.GC()
			base = rssKiB(t)
		}
	}
	runtime.GC()
	end := rssKiB(t)
	t.Logf("%d signs in %v; RSS %d KiB after %d, %d KiB at the end: %+d KiB", n, time.Since(start).Round(time.Second), base, warm, end, end-base)
	if end-base > 5*1024 {
		t.Fatalf("RSS grew by %d KiB over %d signs", end-base, n-warm)
	}
}
