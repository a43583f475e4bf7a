package scenarios

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// killResult is what the mid-sign kill of the Ledger validator's daemon
// measured.
type killResult struct {
	inFlight    string        // the sign in flight, as the restarted daemon logged it
	atHeight    int64         // the network's height at the kill
	signFailed  bool          // the node logged that sign as failed
	othersOn    time.Duration // from the kill to the next block the other three made
	restartWait time.Duration // how long the daemon stayed down
	rejoin      time.Duration // from the restart to the validator's next signed vote
	refused     float64       // signerkit_device_refused_inflight_total after the restart
}

var inFlightLine = regexp.MustCompile(`msg="the previous run ended while[^"]*".* phase=(\w+) height=(\d+) round=(\d+)`)

// countLines counts the lines of s that hold sub.
func countLines(s, sub string) int { return strings.Count(s, sub) }

// killMidSign waits for validator v (on the simulated Ledger) to start a
// prevote, kills its daemon with SIGKILL 100 ms into the device's ~530 ms
// sign, checks the other three go on without it, restarts the daemon
// after down, and measures how long the validator takes to sign again.
func killMidSign(t *testing.T, vals []*validator, v *validator, down time.Duration) *killResult {
	t.Helper()
	const prevoteStart = `"msg":"enterPrevote: ProposalBlock is valid"`
	n := countLines(v.node.out.String(), prevoteStart)
	deadline := time.Now().Add(30 * time.Second)
	for countLines(v.node.out.String(), prevoteStart) == n {
		if time.Now().After(deadline) {
			t.Fatal("validator 0 started no prevote within 30 s")
		}
		time.Sleep(2 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	others := vals[1:]
	hk := height(others[0].rpc)
	killed := time.Now()
	_ = v.daemon.cmd.Process.Kill()
	<-v.daemon.exit
	kr := &killResult{atHeight: hk}
	waitHeight(t, others, hk+1, 60*time.Second)
	kr.othersOn = time.Since(killed)
	if wait := down - time.Since(killed); wait > 0 {
		time.Sleep(wait)
	}
	kr.restartWait = time.Since(killed)
	signed := countLines(v.node.out.String(), `"msg":"Signed and pushed vote"`)
	restarted := time.Now()
	startDaemon(t, v)
	deadline = time.Now().Add(60 * time.Second)
	for countLines(v.node.out.String(), `"msg":"Signed and pushed vote"`) == signed {
		if time.Now().After(deadline) {
			t.Fatalf("validator 0 signed no vote within 60 s of its daemon's restart")
		}
		time.Sleep(5 * time.Millisecond)
	}
	kr.rejoin = time.Since(restarted)
	kr.signFailed = strings.Contains(v.node.out.String(), `"msg":"Error signing vote"`) ||
		strings.Contains(v.node.out.String(), `"msg":"enterPropose: Error signing proposal"`)
	if m := inFlightLine.FindStringSubmatch(v.daemon.out.String()); m != nil {
		kr.inFlight = m[1] + " " + m[2] + "/" + m[3]
	}
	if kr.inFlight == "" {
		t.Errorf("the restarted daemon logged no sign in flight at the kill:\n%s", tailOf(v.daemon.out.String(), 3000))
	}
	t.Logf("killed with %s in flight, the network at height %d (the node logged the sign failed: %v); the next block %v later; restarted after %v; validator 0 signed again %v after the restart",
		kr.inFlight, hk, kr.signFailed, kr.othersOn.Round(time.Millisecond), kr.restartWait.Round(time.Millisecond), kr.rejoin.Round(time.Millisecond))
	return kr
}

func killSection(b *strings.Builder, r *result) {
	k := r.kill
	if k == nil {
		return
	}
	fmt.Fprintf(b, "### The mid-sign kill\n\n")
	fmt.Fprintf(b, "Validator 0's daemon (simulated Ledger) was killed with SIGKILL 100 ms after its node started a prevote, "+
		"the network at height %d; the restarted daemon found the %s sign in flight (its signerkit-inflight record), "+
		"and the node logged that sign as failed: %v. The other three made the next block %v after the kill "+
		"(a single validator halts there for good: docs/daemon.md). The daemon was restarted %v after the kill; "+
		"validator 0 signed its next vote %v after the restart. Device refusals of the lost vote after the restart "+
		"(signerkit_device_refused_inflight_total): %.0f. Heights decided in round > 0 over the run: %d of %d.\n\n",
		k.atHeight, k.inFlight, k.signFailed, k.othersOn.Round(time.Millisecond), k.restartWait.Round(time.Millisecond),
		k.rejoin.Round(time.Millisecond), k.refused, r.chain.lateRounds, r.chain.heights)
}
