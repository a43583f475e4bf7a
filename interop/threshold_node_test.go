package interop

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	dbm "github.com/cometbft/cometbft-db"
	"github.com/cometbft/cometbft/privval"
	"github.com/cometbft/cometbft/store"
	gnostore "github.com/gnolang/gno/tm2/pkg/bft/store"
	tm2db "github.com/gnolang/gno/tm2/pkg/db"

	"github.com/signerkit/signerkit/guard/migrate"
)

// Threshold validators end to end: a real CometBFT v0.38 node (kvstore)
// and a real gnoland v1.7.1 node, each signing through a `signerkit start`
// daemon whose key is a 2-of-3 threshold key split from the node's own
// priv_validator_key.json, its three parties each a `signerkit party`
// process, as docs/threshold.md lays it out. Each party is killed
// (SIGKILL) in turn and started again on its state, then the coordinator
// daemon is killed and started again; the chain must go on, and the
// node's own block store, evidence and consensus WAL must show no
// conflicting vote (checkCmtChain, checkGnoChain). The stall after each
// kill (the time from the kill to the node's next committed height) is
// logged.
//
// `make interop` runs a short version (SK_THRESHOLD_HEIGHTS unset: 30
// heights, CometBFT only, one party killed); `make interop-threshold`
// runs 200 heights on both nodes, every party and the coordinator killed
// (SK_THRESHOLD_HEIGHTS=200, SK_INTEROP_GNOLAND=1).

const thrPartyTimeout = "1s"

// thrHeights is the number of heights a run goes to, and whether it is
// the full run (every party and the coordinator killed).
func thrHeights(t *testing.T) (int64, bool) {
	t.Helper()
	s := os.Getenv("SK_THRESHOLD_HEIGHTS")
	if s == "" {
		return 30, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 30 {
		t.Fatalf("SK_THRESHOLD_HEIGHTS=%q: want a number of heights, at least 30", s)
	}
	return n, true
}

// thrKey is a validator key split 2-of-3, the three parties' processes
// and the coordinator's threshold config.
type thrKey struct {
	dir     string
	chainID string
	cfgs    [3]string // party-<i>.toml
	parties [3]*nodeProc
	metrics [3]string // host:port of each party's /metrics
	coord   string    // threshold.toml
}

var thrServing = regexp.MustCompile(`party serving" id=\d+ addr=(\S+) metrics=(\S+)`)

// thrSplit splits the node's key file with `signerkit threshold split`,
// makes the certificates with `threshold certs`, makes each party's state
// (from state, the old signer's state file, with `party -import-state`;
// at height 1 without one) and starts the three parties.
func thrSplit(t *testing.T, keyFile, chainID string, pub ed25519.PublicKey, state string) *thrKey {
	t.Helper()
	k := &thrKey{dir: t.TempDir(), chainID: chainID}
	keys, certs := filepath.Join(k.dir, "keys"), filepath.Join(k.dir, "certs")
	out := skRun(t, "threshold", "split", "-from", keyFile, "-out", keys, "-t", "2", "-n", "3")
	if !strings.Contains(out, fmt.Sprintf("%x", []byte(pub))) {
		t.Fatalf("threshold split does not print the node's key as the group key:\n%s", out)
	}
	skRun(t, "threshold", "certs", "-out", certs, "-parties", "3", "-coordinators", "1")
	var b strings.Builder
	fmt.Fprintf(&b, "public = %q\ncert = %q\nkey = %q\nca = %q\nparty_timeout = %q\n",
		filepath.Join(keys, "public.pem"), filepath.Join(certs, "coordinator-1.crt"),
		filepath.Join(certs, "coordinator-1.key"), filepath.Join(certs, "ca.crt"), thrPartyTimeout)
	for i := range 3 {
		id := i + 1
		listen := fmt.Sprintf("127.0.0.1:%d", freePort(t))
		fmt.Fprintf(&b, "\n[[party]]\nid = %d\naddr = %q\n", id, listen)
		k.cfgs[i] = filepath.Join(k.dir, fmt.Sprintf("party-%d.toml", id))
		cfg := fmt.Sprintf(`share = %q
listen = %q
cert = %q
key = %q
ca = %q
coordinators = ["coordinator-1"]
state_dir = %q
chains = [%q]
metrics_addr = "127.0.0.1:0"
shutdown_grace = "2s"
`, filepath.Join(keys, fmt.Sprintf("share-%d.pem", id)), listen,
			filepath.Join(certs, fmt.Sprintf("party-%d.crt", id)), filepath.Join(certs, fmt.Sprintf("party-%d.key", id)),
			filepath.Join(certs, "ca.crt"), filepath.Join(k.dir, fmt.Sprintf("party-%d-state", id)), chainID)
		if err := os.WriteFile(k.cfgs[i], []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		if state != "" {
			skRun(t, "party", "-config", k.cfgs[i], "-import-state", state)
		} else {
			skRun(t, "party", "-config", k.cfgs[i], "-init-height", "1")
		}
		k.start(t, i)
	}
	k.coord = filepath.Join(k.dir, "threshold.toml")
	if err := os.WriteFile(k.coord, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return k
}

// start starts party i+1 and waits until it serves.
func (k *thrKey) start(t *testing.T, i int) {
	t.Helper()
	p := startNodeProc(t, fmt.Sprintf("party %d", i+1), exec.Command(skBin(t, "signerkit"), "party", "-config", k.cfgs[i]), "")
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := thrServing.FindStringSubmatch(p.log.String()); m != nil {
			k.parties[i], k.metrics[i] = p, m[2]
			return
		}
		select {
		case err := <-p.done:
			p.done <- err
			t.Fatalf("party %d exited (%v):\n%s", i+1, err, p.log)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("party %d not serving after 30 s:\n%s", i+1, p.log)
		}
	}
}

// kill kills party i+1 (SIGKILL).
func (k *thrKey) kill(i int) {
	p := k.parties[i]
	_ = p.cmd.Process.Kill()
	p.done <- <-p.done
}

// partyMetric sums name{labels…} on party i+1's /metrics; a metric
// without labels is read as it is.
func (k *thrKey) partyMetric(t *testing.T, i int, name string, labels ...string) float64 {
	t.Helper()
	p := &skProc{metrics: "http://" + k.metrics[i]}
	if len(labels) == 0 {
		resp, err := http.Get(p.metrics + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`).FindSubmatch(b)
		if m == nil {
			t.Fatalf("party %d has no %s", i+1, name)
		}
		v, _ := strconv.ParseFloat(string(m[1]), 64)
		return v
	}
	return p.metricSum(t, name, labels...)
}

// latest is the node's latest height, or -1.
func (n *nodeProc) latest() int64 {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	st, err := migrate.FetchStatus(ctx, nil, n.rpc)
	if err != nil {
		return -1
	}
	return st.LatestHeight
}

// stall is what a kill cost the chain: the time from the kill to the
// node's next committed height, and the longest time between two
// heights over the next thrStallHeights.
type stall struct {
	at        int64 // the node's height at the kill
	next, gap time.Duration
}

const thrStallHeights = 5

func (s stall) String() string {
	return fmt.Sprintf("at height %d: next height after %v, longest gap over the next %d heights %v",
		s.at, s.next.Round(time.Millisecond), thrStallHeights, s.gap.Round(time.Millisecond))
}

// stallAfter calls kill and measures the stall (bounded: 60 s a height).
func stallAfter(t *testing.T, n *nodeProc, kill func()) stall {
	t.Helper()
	s := stall{at: n.latest()}
	start := time.Now()
	kill()
	h, last := s.at, start
	for h < s.at+thrStallHeights {
		l := n.latest()
		now := time.Now()
		if l > h {
			if h == s.at {
				s.next = now.Sub(start)
			}
			s.gap = max(s.gap, now.Sub(last))
			h, last = l, now
			continue
		}
		if now.Sub(last) > 60*time.Second {
			t.Fatalf("the node stayed at height %d for 60 s after the kill at height %d", h, s.at)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return s
}

// thrResult is what thrRun leaves for the chain checks.
type thrResult struct {
	first int64 // the node's height at the first kill
	// twoDown is the node's height when two parties were killed (0 if
	// none were); resumed is the time from their restart to the next
	// committed height.
	twoDown int64
	resumed time.Duration
	sk      *skProc // the daemon running at the end
}

// thrRun drives a node signing through the threshold key to the run's
// last height: one party killed (every party, one after the other, and
// then the coordinator daemon, in the full run), each started again on
// its state. startSK starts the coordinator daemon; checkSK checks its
// refusals before it is killed.
//
// No party may refuse a request as a double sign before the coordinator
// is killed. After, a party may: a coordinator killed after two parties
// gave their shares for a vote, and before its guard recorded the vote,
// is asked for that vote again by the node, with a new timestamp (gno
// does that). Every pair of the three includes a party that gave a share
// of the first, which refuses the second (a party holds no whole
// signature to hand back), so that vote is lost and the node goes on in
// the next round: the round the restart costs, which the chain checks
// bound.
func thrRun(t *testing.T, name string, n *nodeProc, k *thrKey, startSK func() *skProc, checkSK func(*skProc)) thrResult {
	t.Helper()
	heights, full := thrHeights(t)
	r := thrResult{sk: startSK()}
	step := max(heights/10, 5)
	h0 := n.waitHeight(t, 1, 120*time.Second)
	t0 := time.Now()
	h := n.waitHeight(t, h0+max(step, 10), 120*time.Second)
	t.Logf("%s: %v a height undisturbed (heights %d to %d)", name, time.Since(t0)/time.Duration(max(h-h0, 1)), h0, h)
	var stalls []string
	noRefusals := func(i int) {
		if v := k.partyMetric(t, i, "signerkit_party_refusals_total", "reason", "double_sign"); v != 0 {
			t.Errorf("party %d refused %v requests as double signs", i+1, v)
		}
	}
	// The short run kills the party that gave the most shares so far (the
	// coordinator asks the two fastest, so a party it does not use costs
	// nothing when it dies); the full run kills each in turn.
	order := []int{0, 1, 2}
	if !full {
		order = order[:1]
		for i := range 3 {
			if k.partyMetric(t, i, "signerkit_party_shares_total") > k.partyMetric(t, order[0], "signerkit_party_shares_total") {
				order[0] = i
			}
		}
	}
	for _, i := range order {
		noRefusals(i)
		s := stallAfter(t, n, func() { k.kill(i) })
		if r.first == 0 {
			r.first = s.at
		}
		stalls = append(stalls, fmt.Sprintf("party %d killed %v", i+1, s))
		h = n.waitHeight(t, s.at+step, 120*time.Second) // signing with two parties
		k.start(t, i)
		h = n.waitHeight(t, h+step/2, 120*time.Second)
	}
	for i := range 3 {
		noRefusals(i)
	}
	if full {
		checkSK(r.sk)
		s := stallAfter(t, n, func() {
			_ = r.sk.cmd.Process.Kill()
			r.sk.done <- <-r.sk.done
			r.sk = startSK()
		})
		stalls = append(stalls, fmt.Sprintf("coordinator daemon killed and started again %v", s))
		h = n.waitHeight(t, s.at+step, 120*time.Second)
		r.twoDown, r.resumed = thrTwoDown(t, n, k, r.sk)
		stalls = append(stalls, fmt.Sprintf("parties 1 and 2 killed at height %d, started again after %v: next height after %v",
			r.twoDown, thrTwoDownFor, r.resumed.Round(time.Millisecond)))
	}
	h = n.waitHeight(t, max(heights, h+step/2), 300*time.Second)
	t.Logf("%s: %d heights through the threshold key; stalls (kill to the next committed height):\n  %s", name, h, strings.Join(stalls, "\n  "))
	for i := range 3 {
		t.Logf("party %d (since its restart): %v shares, %v double-sign refusals (after the coordinator's restart)", i+1,
			k.partyMetric(t, i, "signerkit_party_shares_total"), k.partyMetric(t, i, "signerkit_party_refusals_total", "reason", "double_sign"))
	}
	return r
}

// thrTwoDownFor is how long two parties stay down.
const thrTwoDownFor = 4 * time.Second

// thrTwoDown kills parties 1 and 2: the daemon must refuse the node's
// next sign request (a RemoteSignerError: outcome refused) within the
// sign's deadline (sign_timeout, 5 s), and the chain stops; once both
// are started again it goes on. It returns the node's height at the kill
// and the time from the restart to the next committed height.
func thrTwoDown(t *testing.T, n *nodeProc, k *thrKey, sk *skProc) (int64, time.Duration) {
	t.Helper()
	refused := sk.metricSum(t, "signerkit_requests_total", "outcome", "refused")
	at := n.latest()
	start := time.Now()
	k.kill(0)
	k.kill(1)
	for sk.metricSum(t, "signerkit_requests_total", "outcome", "refused") == refused {
		if time.Since(start) > 15*time.Second {
			t.Fatalf("two parties down: no refusal within 15 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if d := time.Since(start); d > 6*time.Second {
		t.Errorf("two parties down: the first refusal came %v after the kill, past the sign's deadline (5 s)", d)
	} else {
		t.Logf("two parties down: the first refusal came %v after the kill", d.Round(time.Millisecond))
	}
	time.Sleep(time.Until(start.Add(thrTwoDownFor)))
	if l := n.latest(); l > at+1 {
		t.Errorf("with two parties of three down the node went from height %d to %d", at, l)
	}
	h := n.latest()
	k.start(t, 0)
	k.start(t, 1)
	restarted := time.Now()
	n.waitHeight(t, h+1, 120*time.Second)
	return at, time.Since(restarted)
}

// checkRoundsAfter fails t if a height above from (the first kill) was
// committed in a round above 1: a kill costs at most one round (none is
// expected for a party's, one for the coordinator's). rounds maps each
// height to its commit's round.
func checkRoundsAfter(t *testing.T, from, twoDown int64, rounds map[int64]int64) {
	t.Helper()
	if from == 0 {
		return
	}
	var late []string
	for h, r := range rounds {
		if twoDown > 0 && h > twoDown && h <= twoDown+1 {
			// No signature could be made for it while two were down.
			t.Logf("height %d, signed once two parties were back, was committed in round %d", h, r)
			continue
		}
		if h > from && r > 0 {
			late = append(late, fmt.Sprintf("%d in round %d", h, r))
			if r > 1 {
				t.Errorf("height %d, after the first kill at height %d, was committed in round %d", h, from, r)
			}
		}
	}
	t.Logf("after the first kill at height %d, heights committed in a later round than 0: %v", from, late)
}

// TestThresholdCometBFTNode: a CometBFT v0.38 node signing through a
// 2-of-3 threshold key (see the top of this file).
func TestThresholdCometBFTNode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a CometBFT node and four signerkit processes")
	}
	home := t.TempDir()
	if out, err := exec.Command(cmtBin(t), "init", "--home", home).CombinedOutput(); err != nil {
		t.Fatalf("cometbft init: %v\n%s", err, out)
	}
	fastBlocks(t, filepath.Join(home, "config", "config.toml"))
	genesis := filepath.Join(home, "config", "genesis.json")
	chainID := genesisChainID(t, genesis)
	keyFile := filepath.Join(home, "config", "priv_validator_key.json")
	pub := ed25519.PublicKey(privval.LoadFilePV(keyFile, filepath.Join(home, "data", "priv_validator_state.json")).Key.PubKey.Bytes())

	k := thrSplit(t, keyFile, chainID, pub, "")
	// As docs/threshold.md says, the whole key leaves the node's host.
	if err := os.Rename(keyFile, filepath.Join(k.dir, "offline_priv_validator_key.json")); err != nil {
		t.Fatal(err)
	}
	skDir := t.TempDir()
	laddr := "unix://" + filepath.Join(skDir, "pv.sock")
	skRun(t, "init", "-home", skDir, "-genesis", genesis, "-key", "threshold:config="+k.coord, "-validator", laddr, "-height", "1")
	cfgPath := testMetricsAddr(t, filepath.Join(skDir, "signerkit.toml"))
	out := skRun(t, "keys", "show", "threshold:config="+k.coord)
	if !strings.Contains(out, fmt.Sprintf("%x", []byte(pub))) {
		t.Fatalf("keys show of the threshold key:\n%s", out)
	}

	n := startCmtNode(t, home, "--priv_validator_laddr", laddr)
	// The node never restarts, so nothing may be refused as a double sign.
	noRefusal := func(sk *skProc) { checkRefusedOnlyEarlierSteps(t, sk, 0, 0, 0) }
	r := thrRun(t, "cometbft", n, k, func() *skProc { return skStart(t, cfgPath) }, noRefusal)
	sk := r.sk
	n.stop(t)
	noRefusal(sk)
	if s := sk.metricSum(t, "signerkit_requests_total", "outcome", "signed"); s < 10 {
		t.Fatalf("signerkit signed %v requests: the node did not sign through it", s)
	}
	sk.stop(t)
	if m := regexp.MustCompile(`(?i)double.?sign|conflicting`).FindString(n.log.String()); m != "" {
		t.Errorf("the node's log mentions %q", m)
	}
	checkCmtChain(t, home, chainID, pub, r.first)
	checkRoundsAfter(t, r.first, r.twoDown, cmtCommitRounds(t, home))
}

// cmtCommitRounds reads the stopped node's block store: each height's
// commit round.
func cmtCommitRounds(t *testing.T, home string) map[int64]int64 {
	t.Helper()
	db, err := dbm.NewDB("blockstore", dbm.GoLevelDBBackend, filepath.Join(home, "data"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	bs := store.NewBlockStore(db)
	rounds := map[int64]int64{}
	for h := int64(1); h < bs.Height(); h++ {
		if c := bs.LoadBlockCommit(h); c != nil {
			rounds[h] = int64(c.Round)
		}
	}
	return rounds
}

// TestThresholdGnoNode: a gnoland v1.7.1 node signing through a 2-of-3
// threshold key. gno makes a new chain's genesis only from the node's own
// key (`gnoland start -lazy`), so the node signs its first heights with
// its FilePV, and the key and state then move to the threshold key as
// docs/quickstart.md moves them to signerkit (SK_INTEROP_GNOLAND=1 and
// SK_THRESHOLD_HEIGHTS; make interop-threshold).
func TestThresholdGnoNode(t *testing.T) {
	if os.Getenv("SK_INTEROP_GNOLAND") == "" || os.Getenv("SK_THRESHOLD_HEIGHTS") == "" {
		t.Skip("builds and runs gnoland: set SK_INTEROP_GNOLAND=1 and SK_THRESHOLD_HEIGHTS (make interop-threshold)")
	}
	const chainID = "threshold-gno"
	root := gnoRoot(t)
	home, data, cfg := initGnoHome(t)
	keyFile := filepath.Join(data, "secrets", "priv_validator_key.json")
	stateFile := filepath.Join(data, "secrets", "priv_validator_state.json")

	n := startGnoNodeChain(t, home, root, chainID)
	n.waitHeight(t, 3, 120*time.Second)
	n.stop(t)
	b, err := os.ReadFile(stateFile)
	if err != nil {
		t.Fatal(err)
	}
	old, err := migrate.Parse(b)
	if err != nil || old.Format != migrate.Gno || old.Height < 3 {
		t.Fatalf("the node's state file: %+v %v\n%s", old, err, b)
	}

	skDir := t.TempDir()
	sock := filepath.Join(skDir, "gno.sock")
	keyShow := skRun(t, "keys", "import", "-from", keyFile, "-to", "inprocess:file="+filepath.Join(skDir, "check.pem"))
	pub := pubFromKeysOutput(t, keyShow)
	// The parties take the node's state as the coordinator does: the node
	// may have stopped mid-height, and parties made at the next height
	// would refuse the rest of it, halting a chain of one validator.
	k := thrSplit(t, keyFile, chainID, pub, stateFile)
	if err := os.Rename(keyFile, filepath.Join(k.dir, "offline_priv_validator_key.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(skDir, "check.pem")); err != nil {
		t.Fatal(err)
	}
	skRun(t, "init", "-home", skDir, "-genesis", filepath.Join(home, "genesis.json"), "-protocol", "tm2-tmkms",
		"-key", "threshold:config="+k.coord, "-validator", "unix://"+sock)
	cfgPath := testMetricsAddr(t, filepath.Join(skDir, "signerkit.toml"))
	skRun(t, "state", "import", "-config", cfgPath, "-from", stateFile)
	gnoland(t, home, "config", "set", "-config-path", cfg, "consensus.priv_validator.tmkms_listener.chain_id", chainID)
	gnoland(t, home, "config", "set", "-config-path", cfg, "consensus.priv_validator.tmkms_listener.listen_addr", "unix://"+sock)
	// gnoland waits retry_timeout (1 s by default) before it asks a signer
	// again after a failed request: the coordinator's restart stalled the
	// chain for about that long. CometBFT waits 100 ms; so does this node.
	gnoland(t, home, "config", "set", "-config-path", cfg, "consensus.priv_validator.tmkms_listener.retry_timeout", "100ms")

	n = startGnoNodeChain(t, home, root, chainID)
	// The restarted node may ask again for an earlier step of the height
	// and round it stopped in, which the daemon refuses as FilePV would.
	check := func(sk *skProc) { checkRefusedOnlyEarlierSteps(t, sk, old.Height, old.Round, old.Step) }
	r := thrRun(t, "gnoland", n, k, func() *skProc { return skStart(t, cfgPath) }, check)
	sk := r.sk
	n.stop(t)
	check(sk)
	if s := sk.metricSum(t, "signerkit_requests_total", "outcome", "signed"); s < 10 {
		t.Fatalf("signerkit signed %v requests: the node did not sign through it", s)
	}
	sk.stop(t)
	// The node logs the refusals of an earlier step checked above; any
	// other line on a double sign fails.
	earlier := fmt.Sprintf("step regression: asked to sign %d/%d/", old.Height, old.Round)
	for _, l := range regexp.MustCompile(`(?im)^.*(double.?sign|conflicting).*$`).FindAllString(n.log.String(), -1) {
		if !strings.Contains(l, earlier) {
			t.Errorf("the node's log: %s", l)
		}
	}
	checkGnoChain(t, data, chainID, pub, old.Height)
	checkRoundsAfter(t, r.first, r.twoDown, gnoCommitRounds(t, data))
}

// gnoCommitRounds reads the stopped node's block store: each height's
// commit round.
func gnoCommitRounds(t *testing.T, data string) map[int64]int64 {
	t.Helper()
	db, err := tm2db.NewDB("blockstore", tm2db.PebbleDBBackend, filepath.Join(data, "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	bs := gnostore.NewBlockStore(db)
	rounds := map[int64]int64{}
	for h := int64(1); h < bs.Height(); h++ {
		if c := bs.LoadBlockCommit(h); c != nil {
			rounds[h] = int64(c.Round())
		}
	}
	return rounds
}

// startGnoNodeChain starts gnoland in home for chainID (see startGnoNode).
func startGnoNodeChain(t *testing.T, home, root, chainID string) *nodeProc {
	t.Helper()
	cmd := exec.Command(gnolandBin(t), "start", "-lazy", "-chainid", chainID, "-gnoroot-dir", root,
		"-data-dir", "gnoland-data", "-genesis", "genesis.json", "-log-level", "info")
	cmd.Dir = home
	rpc, err := os.ReadFile(filepath.Join(home, "rpc"))
	if err != nil {
		t.Fatal(err)
	}
	return startNodeProc(t, "gnoland", cmd, "http://"+string(rpc))
}
