package scenarios

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// original is the table the first experiment made (issue 29): per sign,
// seen from the validators' logs, in ms.
var original = []struct {
	row      string
	ms       float64
	scenario string // where we measure the same path
	kind     string
	note     string
}{
	{"in process", 1, "a", inProcess, "original: <1 ms"},
	{"gnokms → gnokey", 173, "b", keybasePS, "bcrypt at cost 12"},
	{"gnokms → Ledger Nano S Plus", 580, "e", ledgerGo, "526 device + 50 ledger-go sleep + 3 USB"},
	{"signerkit → Ledger Nano S Plus (our transport)", 535, "c", ledgerSim, "the goal: ≤ 535 ms"},
	{"YubiHSM 2", 131, "d", yubiHSM, "projected, not measured"},
}

// origMS prints an original figure; the in-process row said "<1".
func origMS(v float64) string {
	if v == 1 {
		return "<1"
	}
	return ms(v)
}

// voteSigns are a kind's prevotes and precommits together.
func voteSigns(s nodeSigns) []time.Duration {
	return append(append([]time.Duration(nil), s["prevote"]...), s["precommit"]...)
}

func find(results []*result, id string) *result {
	for _, r := range results {
		if r.sc.id == id {
			return r
		}
	}
	return nil
}

func report(results []*result, blocks int64, failed []scenario) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Sign latency on a live gno network\n\n")
	fmt.Fprintf(&b, "Written by `make scenarios` (interop/scenarios): four gnoland v1.7.1 validators on loopback, "+
		"each key behind its own signerkit daemon, %d blocks per scenario, timeout_commit %v unless the Blocks table says otherwise. "+
		"Every figure below is measured on this machine unless its row says modeled; "+
		"the simulated devices sleep their modeled time (real-time mode), so a device's share of a sign is the simulator's model "+
		"(docs/latency-profiles.md), and everything around it is measured.\n\n", blocks, timeoutCommit)
	originalTable(&b, results)
	goals(&b, results, failed)
	overheadTable(&b, results)
	floorSection(&b, results)
	chainTable(&b, results)
	bcryptSection(&b, results)
	for _, r := range results {
		scenarioTable(&b, r)
	}
	sources(&b)
	return b.String()
}

func originalTable(b *strings.Builder, results []*result) {
	fmt.Fprintf(b, "## The original table, and ours\n\n")
	fmt.Fprintf(b, "Ours is the mean of every prevote and precommit the validators on that backend signed, "+
		"from the node's log (see Sources).\n\n")
	fmt.Fprintf(b, "| signer | original (ms) | ours, mean (ms) | ours, p50 (ms) | ratio (mean) | scenario | note | signerkit's stages, mean per sign (ms) |\n|---|---:|---:|---:|---:|---|---|---|\n")
	for _, o := range original {
		r := find(results, o.scenario)
		if r == nil {
			fmt.Fprintf(b, "| %s | %s | not run | | | (%s) | %s | |\n", o.row, origMS(o.ms), o.scenario, o.note)
			continue
		}
		votes := voteSigns(r.node[o.kind])
		ours := meanOf(votes)
		fmt.Fprintf(b, "| %s | %s | %s | %s | %.2f | (%s) | %s | %s |\n", o.row, origMS(o.ms), ms(ours), ms(quantile(votes, 0.5)),
			ours/o.ms, o.scenario, o.note, stagesLine(r.daemons[o.kind].stages))
	}
	b.WriteString("\n")
}

// overheadTable: the node's view of a sign minus signerkit's backend
// time for it, per scenario and kind (means over all phases).
func overheadTable(b *strings.Builder, results []*result) {
	fmt.Fprintf(b, "## The remote signer's overhead\n\n")
	fmt.Fprintf(b, "The node's view of a sign (log) minus the backend's own sign time (signerkit_backend_sign_duration_seconds), "+
		"means over every sign; gnokms put its own at ~0.5 ms, the goal is ≤ 0.05 ms. "+
		"signerkit's share is signerkit_request_duration_seconds minus the backend's, split into its state write (the `state` stage: the guard's record written and fdatasync'd) "+
		"and the rest (decoding, the guard's rules, encoding, metrics); what is not signerkit's is the socket and the node's client.\n\n")
	fmt.Fprintf(b, "| scenario | backend | signs | node view (ms) | signerkit request (ms) | backend (ms) | overhead (ms) | of which signerkit (ms) | its state write (ms) | its rest (ms) |\n")
	fmt.Fprintf(b, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range results {
		for _, k := range kindsOf(r.sc) {
			var all []time.Duration
			for _, ph := range phases {
				all = append(all, r.node[k][ph]...)
			}
			d := r.daemons[k]
			req, be := sumPhases(d.request), sumPhases(d.backend)
			node := meanOf(all)
			state := meanMS(d.stages["state/measured"])
			if k == memState {
				state = 0 // its state is in memory: no write to time
			}
			fmt.Fprintf(b, "| (%s) | %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", r.sc.id, k, len(all), ms(node),
				ms(meanMS(req)), ms(meanMS(be)), msFine(node-meanMS(be)), msFine(meanMS(req)-meanMS(be)), msFine(state), msFine(meanMS(req)-meanMS(be)-state))
		}
	}
	b.WriteString("\n")
}

func sumPhases(m map[string][2]float64) [2]float64 {
	var s [2]float64
	for _, ph := range phases {
		s[0] += m[ph][0]
		s[1] += m[ph][1]
	}
	return s
}

func msFine(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf("%.3f", v)
}

func chainTable(b *strings.Builder, results []*result) {
	fmt.Fprintf(b, "## Blocks\n\n")
	fmt.Fprintf(b, "From validator 0's block store: the time from one header to the next (BFT time) and each commit's round.\n\n")
	fmt.Fprintf(b, "| scenario | timeout_commit | heights | block time p50 (ms) | p99 (ms) | decided in round > 0 | wall time | load average at the end |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range results {
		c := r.chain
		share := 0.0
		if c.heights > 0 {
			share = float64(c.lateRounds) / float64(c.heights) * 100
		}
		fmt.Fprintf(b, "| (%s) %s | %v | %d | %s | %s | %d (%.0f %%) | %v | %s |\n", r.sc.id, r.sc.title, r.sc.commitWait(), c.heights,
			ms(quantile(c.blockTimes, 0.5)), ms(quantile(c.blockTimes, 0.99)), c.lateRounds, share, r.elapsed.Round(time.Second), r.load)
	}
	b.WriteString("\n")
}

func scenarioTable(b *strings.Builder, r *result) {
	fmt.Fprintf(b, "## (%s) %s\n\n", r.sc.id, r.sc.title)
	fmt.Fprintf(b, "Protocol %s. Per phase: the node's view (log), signerkit's request and backend means (metrics).\n\n", r.sc.protocol)
	fmt.Fprintf(b, "| backend | phase | signs | node p50 (ms) | node p99 (ms) | node mean (ms) | signerkit request mean (ms) | backend mean (ms) |\n")
	fmt.Fprintf(b, "|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, k := range kindsOf(r.sc) {
		for _, ph := range phases {
			ds := r.node[k][ph]
			d := r.daemons[k]
			fmt.Fprintf(b, "| %s | %s | %d | %s | %s | %s | %s | %s |\n", k, ph, len(ds), ms(quantile(ds, 0.5)),
				ms(quantile(ds, 0.99)), ms(meanOf(ds)), ms(meanMS(d.request[ph])), ms(meanMS(d.backend[ph])))
		}
		if st := stagesLine(r.daemons[k].stages); st != "" {
			fmt.Fprintf(b, "\n%s stages, mean per sign (signerkit_sign_stage_duration_seconds): %s\n\n", k, st)
		}
	}
	b.WriteString("\n")
	killSection(b, r)
}

func stagesLine(st map[string][2]float64) string {
	var parts []string
	for _, name := range sortedKeys(st) {
		if st[name][1] > 0 {
			parts = append(parts, fmt.Sprintf("%s %s ms", name, msFine(meanMS(st[name]))))
		}
	}
	return strings.Join(parts, ", ")
}

func sortedKeys(m map[string][2]float64) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	for i := 1; i < len(ks); i++ {
		for j := i; j > 0 && ks[j] < ks[j-1]; j-- {
			ks[j], ks[j-1] = ks[j-1], ks[j]
		}
	}
	return ks
}

func sources(b *strings.Builder) {
	fmt.Fprintf(b, "## Sources\n\n")
	fmt.Fprintf(b, "- Node view (measured): each gnoland logs \"Signed and pushed vote\" after its signer returns, with the vote's "+
		"timestamp, read from its clock just before the request (the genesis sets time_iota_ms to 1, so it is the clock's); "+
		"a proposal's sign runs from its timestamp, in the node's WAL, to the \"Signed proposal\" line. Log times are the "+
		"JSON log's `ts`.\n")
	fmt.Fprintf(b, "- signerkit request and backend (measured): each daemon's /metrics, scraped when the network reached the last height.\n")
	fmt.Fprintf(b, "- Device time (modeled): cmd/ledgersim's Nano S Plus profile (526 ms device, 1 ms per HID report) and "+
		"cmd/yubihsmsim's YubiHSM 2 profile, slept in real time; the ledger-go row adds the simulator's model of ledger-go's 50 ms "+
		"sleep before each APDU, since zondax/ledger-go needs a USB device.\n")
	fmt.Fprintf(b, "- Keybase (measured): \"keybase per-sign\" runs bcrypt at cost 12 on every sign (gnokey's way), on this machine's "+
		"2 shared cores, four daemons at once in (b); \"keybase\", the three other validators of (c), (d), (e) and (k), decrypts once at start.\n")
	fmt.Fprintf(b, "- Sign counts: a validator whose signs are slow (a device) is asked for fewer, because the other three often "+
		"make two thirds and move to the next height before it gets to a step.\n")
	fmt.Fprintf(b, "- Wall time: each scenario's, setup and 100 blocks, on 2 cores shared with other work (other builds and tests ran on "+
		"this machine during the run); the budget is 3 minutes, and (b)'s floor is over it (SK_SCENARIO_BUDGET lifts it).\n")
	fmt.Fprintf(b, "- Floors (measured): (a-floor) is gno's own remote-signer server and (a-memstate) signerkit with its state in memory, "+
		"each run by the test binary in place of the daemon (interop/scenarios/floor_test.go); the fdatasync probe and the bcrypt "+
		"timing are the test's own.\n")
	fmt.Fprintf(b, "- Blocks (measured): validator 0's block store, after the nodes stopped; every precommit in every commit is "+
		"verified under crypto/ed25519 and gno's Vote.Verify.\n")
	fmt.Fprintf(b, "- Original (the first experiment, issue 29): 4 gno validators, 100 blocks per scenario, a proxy timing Sign() "+
		"from the validators' logs; its YubiHSM row was projected.\n")
}

// goals checks the goals against what was measured.
func goals(b *strings.Builder, results []*result, failed []scenario) {
	fmt.Fprintf(b, "## Goals\n\n")
	for _, sc := range failed {
		fmt.Fprintf(b, "- Scenario (%s), %s, did not finish in this run (the test failed; its log says why): its rows are missing or say not run.\n", sc.id, sc.title)
	}
	if r := find(results, "c"); r != nil {
		m := meanOf(voteSigns(r.node[ledgerSim]))
		fmt.Fprintf(b, "- Ledger through our transport ≤ 535 ms per sign on the live network: %s ms mean (%s).\n", ms(m), yes(m <= 535))
	}
	if r := find(results, "e"); r != nil {
		fmt.Fprintf(b, "- The same through ledger-go's stall: %s ms mean, against the original's 580.\n", ms(meanOf(voteSigns(r.node[ledgerGo]))))
	}
	overheadGoal(b, results)
	budgetGoal(b, results)
	b.WriteString("\n")
}

func yes(ok bool) string {
	if ok {
		return "met"
	}
	return "not met"
}
