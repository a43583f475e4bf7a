package scenarios

import (
	"crypto/ed25519"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// scenario is one run of the four-validator network.
type scenario struct {
	id, title string
	kinds     [4]string
	protocol  string
	kill      bool // kill validator 0's daemon mid-sign halfway through
	// commit is the nodes' timeout_commit: timeoutCommit unless set.
	commit time.Duration
}

var allScenarios = []scenario{
	{"a", "all four in process", [4]string{inProcess, inProcess, inProcess, inProcess}, "tm2-tmkms", false, 0},
	// The floors (floor_test.go): (a) with the guard's state in memory,
	// and gno's own server with no state beside (a-remote).
	{"a-memstate", "as (a), the guard's state in memory (no fdatasync)", [4]string{memState, memState, memState, memState}, "tm2-tmkms", false, 0},
	{"a-remote", "all four in process, gno's native remote signer", [4]string{inProcess, inProcess, inProcess, inProcess}, "tm2-remote", false, 0},
	{"a-floor", "all four on gno's own remote-signer server, the key in memory, no state", [4]string{floorGno, floorGno, floorGno, floorGno}, "tm2-remote", false, 0},
	// (b) runs without timeout_commit: its heights are bound by bcrypt on
	// 2 cores (see bcryptFloor), and the wait would add 50 s idle.
	{"b", "all four on gnokey's keybase, bcrypt every sign", [4]string{keybasePS, keybasePS, keybasePS, keybasePS}, "tm2-tmkms", false, noCommitWait},
	// The three keybase validators of (c), (d) and (e) decrypt once: with
	// bcrypt on every sign they make each block take seconds on 2 cores,
	// and (b) measures that path already.
	{"c", "one on the simulated Ledger, three on keybase", [4]string{ledgerSim, keybaseUO, keybaseUO, keybaseUO}, "tm2-tmkms", false, 0},
	{"d", "one on the simulated YubiHSM 2, three on keybase", [4]string{yubiHSM, keybaseUO, keybaseUO, keybaseUO}, "tm2-tmkms", false, 0},
	{"e", "as (c), with ledger-go's 50 ms stall", [4]string{ledgerGo, keybaseUO, keybaseUO, keybaseUO}, "tm2-tmkms", false, 0},
	{"k", "as (c), the Ledger validator's daemon killed mid-sign", [4]string{ledgerSim, keybaseUO, keybaseUO, keybaseUO}, "tm2-tmkms", true, 0},
}

// result is what one scenario measured.
type result struct {
	sc      scenario
	blocks  int64
	elapsed time.Duration
	// per backend kind: the node-side signs per phase, and the daemons'
	// histograms added up.
	node    map[string]nodeSigns
	daemons map[string]daemonStats
	chain   chainStats
	kill    *killResult
	fsync   []time.Duration // the disk's fdatasync, probed during the run
	bcrypt  time.Duration   // one bcrypt's CPU time, for (b)'s floor
	load    string          // the one-minute load average at the end
}

// TestScenarios runs the scenarios SK_SCENARIOS names (comma-separated
// ids, or "all") for SK_SCENARIO_BLOCKS blocks each (default 100), and
// writes the report to SK_SCENARIO_REPORT if set.
func TestScenarios(t *testing.T) {
	which := os.Getenv("SK_SCENARIOS")
	if which == "" {
		t.Skip("runs four gnoland nodes per scenario: set SK_SCENARIOS (make scenarios, make scenarios-smoke)")
	}
	blocks := int64(100)
	if b := os.Getenv("SK_SCENARIO_BLOCKS"); b != "" {
		n, err := strconv.ParseInt(b, 10, 64)
		if err != nil || n < 3 {
			t.Fatalf("SK_SCENARIO_BLOCKS=%q: want a number of blocks, at least 3", b)
		}
		blocks = n
	}
	t.Setenv(kbPassEnv, "scenario passphrase")
	var results []*result
	var failed []scenario
	for _, sc := range allScenarios {
		if which != "all" && !contains(strings.Split(which, ","), sc.id) {
			continue
		}
		if !t.Run(sc.id, func(t *testing.T) { results = append(results, runScenario(t, sc, blocks)) }) {
			failed = append(failed, sc)
		}
	}
	// The report is written even when a scenario failed: it names the
	// failed ones, and the test still fails.
	text := report(results, blocks, failed)
	if path := os.Getenv("SK_SCENARIO_REPORT"); path != "" && len(results) > 0 {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", path)
	} else {
		t.Log("\n" + text)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if strings.TrimSpace(x) == s {
			return true
		}
	}
	return false
}

// scenarioBudget is the most one scenario may take, setup included: 3
// minutes, or SK_SCENARIO_BUDGET (a duration) on a busier machine. A
// scenario whose floor (kdf: one bcrypt, measured, for keybase per-sign;
// see bcryptFloor) is over the budget gets twice its floor instead, so
// that it runs to its end and the report says by how much it misses.
func scenarioBudget(t *testing.T, kdf time.Duration, blocks int64) time.Duration {
	budget := 3 * time.Minute
	if s := os.Getenv("SK_SCENARIO_BUDGET"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			t.Fatalf("SK_SCENARIO_BUDGET=%q: want a duration", s)
		}
		budget = d
	}
	if kdf > 0 {
		budget = max(budget, 2*bcryptFloor(kdf, 2)*time.Duration(blocks+2))
	}
	return budget
}

func runScenario(t *testing.T, sc scenario, blocks int64) *result {
	var kdf time.Duration
	if contains(sc.kinds[:], keybasePS) {
		kdf = measureBcrypt(t)
	}
	began := time.Now()
	budget := scenarioBudget(t, kdf, blocks)
	vals := newValidators(t, sc.kinds, sc.protocol)
	genesis := writeGenesis(t, vals)
	root := gnoRootDir(t)
	for _, v := range vals {
		configureNode(t, v, sc.commitWait())
		configureDaemon(t, v)
	}
	setPeers(t, vals)
	for _, v := range vals {
		startDaemon(t, v)
	}
	stopProbe := startFsyncProbe(t, t.TempDir(), 200*time.Millisecond)
	for _, v := range vals {
		startNode(t, v, root, genesis)
	}
	t.Cleanup(func() {
		if dir := os.Getenv("SK_SCENARIO_LOGDIR"); dir != "" {
			keepLogs(t, dir, sc.id, vals)
		}
		if t.Failed() {
			for _, v := range vals {
				t.Logf("gnoland %d:\n%s\nsignerkit %d:\n%s", v.idx, tailOf(v.node.out.String(), 3000), v.idx, tailOf(v.daemon.out.String(), 3000))
			}
		}
	})
	res := &result{sc: sc, blocks: blocks, node: map[string]nodeSigns{}, daemons: map[string]daemonStats{}, bcrypt: kdf}
	if sc.kill {
		waitHeight(t, vals, blocks/2+2, budget-time.Since(began))
		res.kill = killMidSign(t, vals, vals[0], time.Second)
	}
	// Block 1 and 2 carry the start-up (peers connecting); measure from 2.
	waitHeight(t, vals, blocks+2, budget-time.Since(began))
	for _, v := range vals {
		text, err := scrape(v.metrics)
		if err != nil {
			t.Fatalf("signerkit %d metrics: %v", v.idx, err)
		}
		addDaemon(res, v.kind, parseMetrics(text))
		if res.kill != nil && v.idx == 0 {
			res.kill.refused = sumMetric(text, "signerkit_device_refused_inflight_total")
		}
	}
	res.fsync = stopProbe()
	res.load = loadAverage()
	for _, v := range vals {
		v.node.terminate(t)
	}
	for _, v := range vals {
		v.daemon.terminate(t)
	}
	res.elapsed = time.Since(began)
	pubs := make([]ed25519.PublicKey, len(vals))
	for i, v := range vals {
		pubs[i] = v.pub
	}
	for _, v := range vals {
		signs, props := parseNodeLog(t, v.node.out.String())
		signs["proposal"] = proposalSigns(t, v.home, props)
		addNode(res, v.kind, signs)
	}
	res.chain = readChain(t, vals[0].home, pubs, blocks+2)
	t.Logf("scenario %s: %d heights in %v, %d in round > 0", sc.id, res.chain.heights, res.elapsed.Round(time.Second), res.chain.lateRounds)
	return res
}

// noCommitWait asks for a timeout_commit of zero.
const noCommitWait = -1

// commitWait is the scenario's timeout_commit.
func (sc scenario) commitWait() time.Duration {
	switch sc.commit {
	case 0:
		return timeoutCommit
	case noCommitWait:
		return 0
	}
	return sc.commit
}

func addNode(res *result, kind string, s nodeSigns) {
	cur := res.node[kind]
	if cur == nil {
		cur = nodeSigns{}
		res.node[kind] = cur
	}
	for ph, ds := range s {
		cur[ph] = append(cur[ph], ds...)
	}
}

func addDaemon(res *result, kind string, d daemonStats) {
	cur, ok := res.daemons[kind]
	if !ok {
		res.daemons[kind] = d
		return
	}
	for _, pair := range [][2]map[string][2]float64{{cur.request, d.request}, {cur.backend, d.backend}, {cur.stages, d.stages}} {
		for k, v := range pair[1] {
			x := pair[0][k]
			pair[0][k] = [2]float64{x[0] + v[0], x[1] + v[1]}
		}
	}
}

// kindsOf lists a scenario's backend kinds, in validator order, once each.
func kindsOf(sc scenario) []string {
	var ks []string
	for _, k := range sc.kinds {
		if !contains(ks, k) {
			ks = append(ks, k)
		}
	}
	return ks
}

// keepLogs writes every process's output under dir/<scenario>/.
func keepLogs(t *testing.T, dir, id string, vals []*validator) {
	d := filepath.Join(dir, id)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Log(err)
		return
	}
	for _, v := range vals {
		_ = os.WriteFile(filepath.Join(d, fmt.Sprintf("gnoland%d.log", v.idx)), []byte(v.node.out.String()), 0o644)
		_ = os.WriteFile(filepath.Join(d, fmt.Sprintf("signerkit%d.log", v.idx)), []byte(v.daemon.out.String()), 0o644)
	}
}
