package scenarios

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gnolang/gno/tm2/pkg/bft/consensus"
	"github.com/gnolang/gno/tm2/pkg/bft/store"
	bft "github.com/gnolang/gno/tm2/pkg/bft/types"
	walm "github.com/gnolang/gno/tm2/pkg/bft/wal"
	gnoed25519 "github.com/gnolang/gno/tm2/pkg/crypto/ed25519"
	tm2db "github.com/gnolang/gno/tm2/pkg/db"
	_ "github.com/gnolang/gno/tm2/pkg/db/pebbledb"
	"github.com/signerkit/signerkit/interop/internal/testbin"
)

var phases = []string{"proposal", "prevote", "precommit"}

// hr is a height and round.
type hr struct {
	h int64
	r int
}

// nodeSigns are the signs one node logged: per phase, the time from the
// timestamp it put in the message to its log line after the sign.
type nodeSigns map[string][]time.Duration

// logLine is the part of gnoland's JSON log line we read.
type logLine struct {
	TS        float64 `json:"ts"`
	Msg       string  `json:"msg"`
	Height    int64   `json:"height"`
	Round     int     `json:"round"`
	Type      any     `json:"type"`
	Timestamp string  `json:"timestamp"`
}

const voteTimeLayout = "2006-01-02 15:04:05.999999999 -0700 MST"

func tsTime(ts float64) time.Time {
	sec, frac := math.Modf(ts)
	return time.Unix(int64(sec), int64(frac*1e9))
}

// voteType maps the log's vote type (a number or a name) to a phase.
func voteType(v any) string {
	switch x := v.(type) {
	case float64:
		switch bft.SignedMsgType(x) {
		case bft.PrevoteType:
			return "prevote"
		case bft.PrecommitType:
			return "precommit"
		}
	case string:
		s := strings.ToLower(x)
		switch {
		case strings.Contains(s, "prevote") || s == "1":
			return "prevote"
		case strings.Contains(s, "precommit") || s == "2":
			return "precommit"
		}
	}
	return ""
}

// parseNodeLog reads the vote signs from a node's log, and the log time of
// each "Signed proposal" by height/round.
func parseNodeLog(t *testing.T, log string) (nodeSigns, map[hr]time.Time) {
	t.Helper()
	signs := nodeSigns{}
	props := map[hr]time.Time{}
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.Contains(line, []byte(`"Signed`)) {
			continue
		}
		var l logLine
		if json.Unmarshal(line, &l) != nil {
			continue
		}
		switch l.Msg {
		case "Signed and pushed vote":
			ph := voteType(l.Type)
			at, err := time.Parse(voteTimeLayout, l.Timestamp)
			if ph == "" || err != nil {
				t.Fatalf("a vote log line we cannot read (%q, %v): %s", l.Type, err, line)
			}
			signs[ph] = append(signs[ph], tsTime(l.TS).Sub(at))
		case "Signed proposal":
			props[hr{l.Height, l.Round}] = tsTime(l.TS)
		}
	}
	return signs, props
}

// walFiles are the WAL's files, oldest first (wal.000 … then wal).
func walFiles(t *testing.T, dir string) []string { return testbin.WALFiles(t, dir) }

// walProposals returns the timestamps of the proposals in a node's WAL
// (its own and its peers'), by height/round.
func walProposals(t *testing.T, home string) map[hr]time.Time {
	t.Helper()
	out := map[hr]time.Time{}
	for _, f := range walFiles(t, filepath.Join(home, "wal", "cs.wal")) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rd := walm.NewWALReader(bytes.NewReader(b), 1<<20)
		for {
			m, _, err := rd.ReadMessage()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if p := walProposal(m); p != nil {
				out[hr{p.Height, p.Round}] = p.Timestamp
			}
		}
	}
	return out
}

// walProposal returns the proposal a WAL entry holds, if it holds one: a
// msgInfo (unexported) whose Msg is a *consensus.ProposalMessage.
func walProposal(m *walm.TimedWALMessage) *bft.Proposal {
	if m == nil || m.Msg == nil {
		return nil
	}
	rv := reflect.Indirect(reflect.ValueOf(m.Msg))
	if rv.Kind() != reflect.Struct {
		return nil
	}
	f := rv.FieldByName("Msg")
	if !f.IsValid() || !f.CanInterface() {
		return nil
	}
	if pm, ok := f.Interface().(*consensus.ProposalMessage); ok {
		return pm.Proposal
	}
	return nil
}

// proposalSigns matches each "Signed proposal" line with its proposal's
// timestamp in the WAL.
func proposalSigns(t *testing.T, home string, logged map[hr]time.Time) []time.Duration {
	t.Helper()
	if len(logged) == 0 {
		return nil
	}
	inWAL := walProposals(t, home)
	var ds []time.Duration
	for k, at := range logged {
		ts, ok := inWAL[k]
		if !ok {
			t.Fatalf("the node logged its proposal at %d/%d, which its WAL does not hold", k.h, k.r)
		}
		ds = append(ds, at.Sub(ts))
	}
	return ds
}

// chainStats are read from a node's block store.
type chainStats struct {
	heights    int
	blockTimes []time.Duration // from one header time to the next
	lateRounds int             // heights decided in round > 0
}

// readChain reads heights 2..top-1 of a stopped node's block store: the
// block time from each header to the next and each commit's round. Every
// commit's precommits must verify under crypto/ed25519 and gno's own
// Vote.Verify, against the four genesis keys.
func readChain(t *testing.T, home string, pubs []ed25519.PublicKey, upto int64) chainStats {
	t.Helper()
	db, err := tm2db.NewDB("blockstore", tm2db.PebbleDBBackend, filepath.Join(home, "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	bs := store.NewBlockStore(db)
	top := min(bs.Height()-1, upto)
	var st chainStats
	// Height 1 follows the genesis: its time is the genesis time, not a
	// block time; from height 2 on each header's time is BFT time.
	for h := int64(2); h <= top; h++ {
		c := bs.LoadBlockCommit(h)
		if c == nil {
			t.Fatalf("height %d: no commit", h)
		}
		checkCommit(t, h, c, pubs)
		if c.Round() > 0 {
			st.lateRounds++
		}
		st.heights++
		if h > 2 {
			prev, cur := bs.LoadBlockMeta(h-1), bs.LoadBlockMeta(h)
			st.blockTimes = append(st.blockTimes, cur.Header.Time.Sub(prev.Header.Time))
		}
	}
	return st
}

func checkCommit(t *testing.T, h int64, c *bft.Commit, pubs []ed25519.PublicKey) {
	t.Helper()
	n := 0
	for i := range c.Precommits {
		v := c.GetVote(i)
		if v == nil {
			continue
		}
		// The validator set is sorted by address: find the key by it.
		var gp gnoed25519.PubKeyEd25519
		for _, pub := range pubs {
			copy(gp[:], pub)
			if gp.Address() == v.ValidatorAddress {
				break
			}
		}
		if gp.Address() != v.ValidatorAddress {
			t.Fatalf("height %d: a precommit from %s, not a genesis validator", h, v.ValidatorAddress)
		}
		if !ed25519.Verify(gp[:], v.SignBytes(chainID), v.Signature) {
			t.Fatalf("height %d: %s's precommit does not verify", h, v.ValidatorAddress)
		}
		if err := v.Verify(chainID, gp); err != nil {
			t.Fatalf("height %d: %v", h, err)
		}
		n++
	}
	if n < 3 {
		t.Fatalf("height %d: %d precommits, want at least 3 of 4", h, n)
	}
}

// daemonStats are one daemon's histograms, per phase: sum and count.
type daemonStats struct {
	request map[string][2]float64 // signerkit_request_duration_seconds
	backend map[string][2]float64 // signerkit_backend_sign_duration_seconds
	stages  map[string][2]float64 // signerkit_sign_stage_duration_seconds by stage/source (all phases)
}

var promLine = regexp.MustCompile(`^(signerkit_[a-z_]+?)_(sum|count)\{([^}]*)\} (\S+)$`)

func labelOf(labels, name string) string {
	i := strings.Index(labels, name+`="`)
	if i < 0 {
		return ""
	}
	rest := labels[i+len(name)+2:]
	return rest[:strings.IndexByte(rest, '"')]
}

func parseMetrics(text string) daemonStats {
	ds := daemonStats{request: map[string][2]float64{}, backend: map[string][2]float64{}, stages: map[string][2]float64{}}
	for _, l := range strings.Split(text, "\n") {
		m := promLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		val, err := strconv.ParseFloat(m[4], 64)
		if err != nil {
			continue
		}
		var into map[string][2]float64
		key := labelOf(m[3], "phase")
		switch m[1] {
		case "signerkit_request_duration_seconds":
			into = ds.request
		case "signerkit_backend_sign_duration_seconds":
			into = ds.backend
		case "signerkit_sign_stage_duration_seconds":
			into, key = ds.stages, labelOf(m[3], "stage")+"/"+labelOf(m[3], "source")
		default:
			continue
		}
		cur := into[key]
		if m[2] == "sum" {
			cur[0] += val
		} else {
			cur[1] += val
		}
		into[key] = cur
	}
	return ds
}

// mean of a sum/count pair, in milliseconds, or NaN.
func meanMS(sc [2]float64) float64 {
	if sc[1] == 0 {
		return math.NaN()
	}
	return sc[0] / sc[1] * 1000
}

// quantile q of ds (nearest rank), in milliseconds, or NaN.
func quantile(ds []time.Duration, q float64) float64 {
	if len(ds) == 0 {
		return math.NaN()
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return float64(s[max(i, 0)]) / 1e6
}

func meanOf(ds []time.Duration) float64 {
	if len(ds) == 0 {
		return math.NaN()
	}
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return float64(sum) / float64(len(ds)) / 1e6
}

func ms(v float64) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case v < 10:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.0f", v)
	}
}

// sumMetric adds up every series of a counter or gauge.
func sumMetric(text, name string) float64 { return testbin.SumMetric(text, name) }
