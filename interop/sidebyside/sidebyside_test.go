package sidebyside

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// settings says how long each phase runs. The smoke run (the default,
// which `make interop` runs) measures 20 heights per signer on loopback
// and kills the coordinator and horcrux's leader once; SIDEBYSIDE_FULL=1
// measures SIDEBYSIDE_WINDOW (45 s by default) per phase on every
// profile and kills every process in turn.
type settings struct {
	full    bool
	window  time.Duration
	heights int64
	report  string // where to write the report, if anywhere
	// haltAfter is how long after a kill without a commit counts as a
	// halt.
	haltAfter time.Duration
}

func loadSettings(t *testing.T) settings {
	s := settings{heights: 20, report: os.Getenv("SIDEBYSIDE_REPORT"), haltAfter: 15 * time.Second}
	if os.Getenv("SIDEBYSIDE_FULL") == "1" {
		s.full, s.window, s.haltAfter = true, 45*time.Second, 30*time.Second
		if w := os.Getenv("SIDEBYSIDE_WINDOW"); w != "" {
			d, err := time.ParseDuration(w)
			if err != nil {
				t.Fatalf("SIDEBYSIDE_WINDOW: %v", err)
			}
			s.window = d
		}
	}
	return s
}

func TestMain(m *testing.M) {
	code := m.Run()
	if skBinDir != "" {
		os.RemoveAll(skBinDir)
	}
	os.Exit(code)
}

// result is one phase's figures.
type result struct {
	signer, profile string
	quorumRTT       time.Duration
	heights         int64
	elapsed         time.Duration
	blockP50        time.Duration
	signs           int
	p50, p99        time.Duration
	byKind          map[string][2]time.Duration // p50, p99 by signKinds
	cpuPct          float64                     // of one core, summed over the signer's processes
	hwmMB, rssMB    float64
	anonMB, pssMB   float64
	procs           int
	stalls          []stallResult
	checkedHeights  int64
	checkedVotes    int
}

type stallResult struct {
	target string
	d      time.Duration
	halted bool // no commit within d: the chain halted
	// failure is the node's first "failed signing" log line after the
	// kill, if any.
	failure string
}

func (r result) perMinute() float64 { return float64(r.heights) / r.elapsed.Minutes() }

// TestSideBySide runs the phases one after another on one host, each on
// a chain of its own from the same template node, and checks each chain
// for conflicting votes after its node stops.
func TestSideBySide(t *testing.T) {
	st := loadSettings(t)
	syncP50, syncP90 := syncLatency(t)
	tp := newTemplate(t)
	k := newKeys(t, tp, true)
	var results []result
	only := os.Getenv("SIDEBYSIDE_ONLY") // a phase filter, for looking into one signer
	phase := func(signer string, topology topo, kills int) {
		if only != "" && !strings.Contains(signer+"/"+topology.name, only) {
			return
		}
		chainID := fmt.Sprintf("sbs-%d", len(results)+1)
		t.Logf("phase %s: %s, %s", chainID, signer, topology.name)
		results = append(results, runPhase(t, st, k, chainID, signer, topology, kills))
		r := results[len(results)-1]
		t.Logf("%s/%s: %.0f heights/min, p50 %v p99 %v (%d signs), CPU %.1f%%, VmHWM %.0f MB, stalls %v",
			r.signer, r.profile, r.perMinute(), r.p50, r.p99, r.signs, r.cpuPct, r.hwmMB, r.stalls)
	}
	topos := topologies()
	kills := 1 // the coordinator, horcrux's leader
	if st.full {
		kills = 5 // each process, then the coordinator or leader again
	}
	phase(kindFilePV, topos[0], 0)
	if st.full {
		phase(kindInprocess, topos[0], 0)
	}
	phase(kindSKThreshold, topos[0], kills)
	phase(kindSKLocal, topos[0], kills)
	phase(kindHorcrux, topos[0], kills)
	if st.full {
		for _, tpl := range topos[1:] {
			phase(kindSKThreshold, tpl, 0)
			phase(kindSKLocal, tpl, 0)
			phase(kindHorcrux, tpl, 0)
		}
		phase(kindFilePV, topos[0], 0)
	}
	for _, r := range results {
		if r.heights < 10 && st.full {
			t.Errorf("%s/%s: only %d heights measured", r.signer, r.profile, r.heights)
		}
	}
	if st.report != "" {
		if err := os.WriteFile(st.report, []byte(report(st, results, syncP50, syncP90)), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", st.report)
	}
}

const (
	kindFilePV      = "FilePV (the node's own)"
	kindInprocess   = "signerkit, one key"
	kindSKThreshold = "signerkit 2-of-3"
	kindSKLocal     = "signerkit 2-of-3, share 1 in the coordinator"
	kindHorcrux     = "horcrux 2-of-3"
)

// runPhase starts the signer and a node on a new chain, measures, kills
// up to kills of the signer's processes in turn (each started again at
// once, as systemd's Restart=always would), stops everything and checks
// the chain.
func runPhase(t *testing.T, st settings, k *keys, chainID, kind string, tp topo, kills int) result {
	t.Helper()
	home := k.tp.nodeHome(t, chainID)
	res := result{signer: kind, profile: tp.name, quorumRTT: tp.quorumRTT()}
	var n *node
	var r *relay
	set := &signerSet{name: kind}
	if kind == kindFilePV {
		n = startNode(t, home, "")
	} else {
		pvAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
		r = newRelay(t, pvAddr)
		switch kind {
		case kindInprocess:
			set = k.startInprocess(t, chainID, r)
		case kindSKThreshold, kindSKLocal:
			set = k.startSKThreshold(t, chainID, tp, r, kind == kindSKLocal)
		case kindHorcrux:
			set = k.startHorcrux(t, chainID, tp, r)
		}
		n = startNode(t, home, pvAddr)
	}
	measure(t, st, n, r, set, &res)
	for i, kt := range set.kills {
		if i >= kills {
			break
		}
		res.stalls = append(res.stalls, killStall(t, n, kt, st.haltAfter))
	}
	n.waitAbove(t, n.height()+3, 60*time.Second)
	n.stop()
	for _, p := range set.procs {
		p.stop()
	}
	checkNodeLog(t, n)
	res.checkedHeights, res.checkedVotes = checkChain(t, home, chainID, k.tp.pub)
	return res
}

// measure waits for the chain to run (height 5), then measures from one
// commit to the commit that ends the window (or the smoke run's heights).
func measure(t *testing.T, st settings, n *node, r *relay, set *signerSet, res *result) {
	t.Helper()
	n.waitAbove(t, 4, 120*time.Second)
	h0, t0 := n.waitAbove(t, n.height(), 30*time.Second)
	u0 := readUsage(t, set.procs)
	h1, t1 := h0, t0
	for {
		if st.full && t1.Sub(t0) >= st.window || !st.full && h1-h0 >= st.heights {
			break
		}
		h1, t1 = n.waitAbove(t, h1, 60*time.Second)
	}
	u1 := readUsage(t, set.procs)
	if len(set.procs) > 0 {
		t.Logf("memory: %s", memoryBreakdown(set.procs))
	}
	res.heights, res.elapsed = h1-h0, t1.Sub(t0)
	ts := n.commitTimes(h0, h1)
	var gaps []time.Duration
	for i := 1; i < len(ts); i++ {
		gaps = append(gaps, ts[i].Sub(ts[i-1]))
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i] < gaps[j] })
	res.blockP50 = quantile(gaps, 0.5)
	if r != nil {
		ds := r.latencies(t0, t1, "")
		res.signs, res.p50, res.p99 = len(ds), quantile(ds, 0.5), quantile(ds, 0.99)
		res.byKind = map[string][2]time.Duration{}
		for _, k := range signKinds {
			ds := r.latencies(t0, t1, k)
			res.byKind[k] = [2]time.Duration{quantile(ds, 0.5), quantile(ds, 0.99)}
		}
	}
	res.procs = len(set.procs)
	if len(set.procs) > 0 {
		res.cpuPct = float64(u1.ticks-u0.ticks) / clockTicks / res.elapsed.Seconds() * 100
		res.hwmMB, res.rssMB = float64(u1.hwmKB)/1024, float64(u1.rssKB)/1024
		res.anonMB, res.pssMB = float64(u1.anonKB)/1024, float64(u1.pssKB)/1024
	}
}

// killStall lets the chain run three heights, kills the target with
// SIGKILL, starts it again at once, and returns the time from the kill to
// the next commit. A chain of one validator halts for good when its
// signer answers a sign request with an error (CometBFT does not retry
// it, and no other validator moves the round on): after haltAfter without
// a commit the stall is recorded as a halt and the node is restarted, so
// that it asks again and the run goes on.
func killStall(t *testing.T, n *node, kt killTarget, haltAfter time.Duration) stallResult {
	t.Helper()
	n.waitAbove(t, n.height()+2, 60*time.Second)
	p := kt.pick(t)
	killAt := time.Now()
	h := n.height()
	p.kill()
	p.start(t)
	name := fmt.Sprintf("%s (%s)", kt.name, p.name)
	for {
		next, at, ok := n.waitAboveFor(t, h, haltAfter-time.Since(killAt))
		if !ok {
			failure := n.failureSince(killAt)
			t.Logf("killed %s at height %d: no commit within %v (%s); restarting the node", name, h, haltAfter, failure)
			n.stop()
			n.start(t)
			n.waitAbove(t, h, 120*time.Second)
			return stallResult{target: name, d: haltAfter, halted: true, failure: failure}
		}
		if at.After(killAt) {
			t.Logf("killed %s at height %d: next commit after %v", name, h, at.Sub(killAt))
			return stallResult{target: name, d: at.Sub(killAt), failure: n.failureSince(killAt)}
		}
		h = next
	}
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 2, 64)
}

// syncLatency times 200 small writes, each followed by fsync, in a
// directory on the disk the signers' state directories are on: the cost
// of each durable state write a sign waits for.
func syncLatency(t *testing.T) (p50, p90 time.Duration) {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "sync"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ds []time.Duration
	for range 200 {
		start := time.Now()
		if _, err := f.WriteAt([]byte("height 1 round 0 step 3"), 0); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		ds = append(ds, time.Since(start))
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return quantile(ds, 0.5), quantile(ds, 0.9)
}
