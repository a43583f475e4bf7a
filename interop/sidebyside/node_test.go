package sidebyside

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	dbm "github.com/cometbft/cometbft-db"
	"github.com/cometbft/cometbft/consensus"
	cmted25519 "github.com/cometbft/cometbft/crypto/ed25519"
	"github.com/cometbft/cometbft/evidence"
	"github.com/cometbft/cometbft/privval"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
	sm "github.com/cometbft/cometbft/state"
	"github.com/cometbft/cometbft/store"
	cmttypes "github.com/cometbft/cometbft/types"
)

// template is a node home made once by `cometbft init`: its validator key
// is the one every signer of the run holds.
type template struct {
	home    string
	keyFile string
	pub     ed25519.PublicKey
}

func newTemplate(t *testing.T) *template {
	t.Helper()
	home := filepath.Join(t.TempDir(), "template")
	run(t, cmtBin(t), "init", "--home", home)
	keyFile := filepath.Join(home, "config", "priv_validator_key.json")
	pv := privval.LoadFilePV(keyFile, filepath.Join(home, "data", "priv_validator_state.json"))
	return &template{home: home, keyFile: keyFile, pub: ed25519.PublicKey(pv.Key.PubKey.Bytes())}
}

// nodeHome copies the template into a new home for chain chainID: a chain
// of its own for each signer, so no two signers ever sign one chain's
// heights. Blocks come every ~100 ms (timeout_commit).
func (tp *template) nodeHome(t *testing.T, chainID string) string {
	t.Helper()
	home := filepath.Join(t.TempDir(), chainID)
	for _, f := range []string{"config/config.toml", "config/node_key.json", "config/priv_validator_key.json", "data/priv_validator_state.json"} {
		b, err := os.ReadFile(filepath.Join(tp.home, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "config/config.toml" {
			b = regexp.MustCompile(`(?m)^timeout_commit = .*$`).ReplaceAll(b, []byte(`timeout_commit = "100ms"`))
		}
		writeFile(t, filepath.Join(home, f), b)
	}
	b, err := os.ReadFile(filepath.Join(tp.home, "config", "genesis.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g map[string]json.RawMessage
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	g["chain_id"], _ = json.Marshal(chainID)
	b, _ = json.MarshalIndent(g, "", "  ")
	writeFile(t, filepath.Join(home, "config", "genesis.json"), b)
	return home
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// node is a running cometbft node; it learns each commit from its log
// ("finalizing commit of block … height=N"), as the line arrives.
type node struct {
	*proc
	home string

	mu        sync.Mutex
	commits   map[int64]time.Time
	top       int64
	changed   chan struct{}
	conflicts []string // log lines that speak of a conflicting vote
	failures  []logLine
}

// logLine is a "failed signing" line of the node's log.
type logLine struct {
	at   time.Time
	line string
}

// failureSince returns the first failed sign the node logged at or
// after t, if any.
func (n *node) failureSince(t time.Time) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, f := range n.failures {
		if !f.at.Before(t) {
			return f.line
		}
	}
	return ""
}

var commitLine = regexp.MustCompile(`finalizing commit of block.* height=(\d+)`)

// startNode starts the node on home; pvAddr, if not empty, is its
// priv_validator_laddr (a remote signer), otherwise it signs with its
// own FilePV.
func startNode(t *testing.T, home, pvAddr string) *node {
	t.Helper()
	args := []string{"start", "--home", home, "--proxy_app", "kvstore",
		"--rpc.laddr", fmt.Sprintf("tcp://127.0.0.1:%d", freePort(t)),
		"--p2p.laddr", fmt.Sprintf("tcp://127.0.0.1:%d", freePort(t))}
	if pvAddr != "" {
		args = append(args, "--priv_validator_laddr", "tcp://"+pvAddr)
	}
	n := &node{proc: newProc(t, "cometbft", cmtBin(t), args...), home: home, commits: map[int64]time.Time{}, changed: make(chan struct{})}
	n.log.onLine = func(at time.Time, l string) {
		if conflictLine.MatchString(l) {
			n.mu.Lock()
			n.conflicts = append(n.conflicts, l)
			n.mu.Unlock()
		}
		if i := strings.Index(l, "failed signing"); i >= 0 {
			n.mu.Lock()
			n.failures = append(n.failures, logLine{at, l[i:]})
			n.mu.Unlock()
		}
		m := commitLine.FindStringSubmatch(l)
		if m == nil {
			return
		}
		h, _ := strconv.ParseInt(m[1], 10, 64)
		n.mu.Lock()
		defer n.mu.Unlock()
		if _, ok := n.commits[h]; !ok {
			n.commits[h] = at
		}
		if h > n.top {
			n.top = h
			close(n.changed)
			n.changed = make(chan struct{})
		}
	}
	n.start(t)
	return n
}

// height returns the highest height committed so far.
func (n *node) height() int64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.top
}

// waitAbove waits (bounded) for a commit above h and returns its height
// and when its log line arrived.
func (n *node) waitAbove(t *testing.T, h int64, within time.Duration) (int64, time.Time) {
	t.Helper()
	next, at, ok := n.waitAboveFor(t, h, within)
	if !ok {
		t.Fatalf("no commit above height %d within %v", h, within)
	}
	return next, at
}

// waitAboveFor is waitAbove reporting a timeout instead of failing.
func (n *node) waitAboveFor(t *testing.T, h int64, within time.Duration) (int64, time.Time, bool) {
	t.Helper()
	deadline := time.After(within)
	for {
		n.mu.Lock()
		top, ch := n.top, n.changed
		var at time.Time
		if top > h {
			at = n.commits[h+1]
			if at.IsZero() {
				at = n.commits[top]
			}
		}
		n.mu.Unlock()
		if top > h {
			return h + 1, at, true
		}
		if n.exited() {
			t.Fatalf("the node exited before height %d", h+1)
		}
		select {
		case <-ch:
		case <-time.After(time.Second):
		case <-deadline:
			return 0, time.Time{}, false
		}
	}
}

// commitTimes returns the commit times of heights from..to.
func (n *node) commitTimes(from, to int64) []time.Time {
	n.mu.Lock()
	defer n.mu.Unlock()
	var ts []time.Time
	for h := from; h <= to; h++ {
		if at, ok := n.commits[h]; ok {
			ts = append(ts, at)
		}
	}
	return ts
}

// checkChain reads the stopped node's own stores: every commit has the
// one validator's signature, verifying under crypto/ed25519 and
// CometBFT's Vote.Verify; no block carries evidence and the pool holds
// none; the consensus WAL holds no two different votes of the validator
// at one height/round/type. It returns the heights and the WAL votes
// checked.
func checkChain(t *testing.T, home, chainID string, pub ed25519.PublicKey) (heights int64, votes int) {
	t.Helper()
	dataDir := filepath.Join(home, "data")
	bdb, err := dbm.NewDB("blockstore", dbm.GoLevelDBBackend, dataDir)
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	bs := store.NewBlockStore(bdb)
	top := bs.Height()
	cpub := cmted25519.PubKey(pub)
	for h := int64(1); h < top; h++ {
		c := bs.LoadBlockCommit(h)
		if c == nil || len(c.Signatures) != 1 || c.Signatures[0].BlockIDFlag != cmttypes.BlockIDFlagCommit {
			t.Fatalf("%s height %d: commit %v", chainID, h, c)
		}
		if !ed25519.Verify(pub, c.VoteSignBytes(chainID, 0), c.Signatures[0].Signature) {
			t.Fatalf("%s height %d: the commit's signature does not verify", chainID, h)
		}
		if err := c.GetVote(0).Verify(chainID, cpub); err != nil {
			t.Fatalf("%s height %d: %v", chainID, h, err)
		}
		if blk := bs.LoadBlock(h); blk == nil || len(blk.Evidence.Evidence) != 0 {
			t.Fatalf("%s height %d: block %v carries evidence", chainID, h, blk)
		}
	}
	sdb, err := dbm.NewDB("state", dbm.GoLevelDBBackend, dataDir)
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	edb, err := dbm.NewDB("evidence", dbm.GoLevelDBBackend, dataDir)
	if err != nil {
		t.Fatal(err)
	}
	defer edb.Close()
	pool, err := evidence.NewPool(edb, sm.NewStore(sdb, sm.StoreOptions{}), bs)
	if err != nil {
		t.Fatal(err)
	}
	if ev, _ := pool.PendingEvidence(1 << 20); len(ev) != 0 {
		t.Fatalf("%s: pending evidence: %v", chainID, ev)
	}
	return top, checkWAL(t, filepath.Join(dataDir, "cs.wal"), chainID, cpub)
}

// checkWAL decodes every WAL file and checks the validator's votes: each
// verifies, and one per height/round/type.
func checkWAL(t *testing.T, dir, chainID string, pub cmted25519.PubKey) int {
	t.Helper()
	type hrt struct {
		h int64
		r int32
		t cmtproto.SignedMsgType
	}
	seen := map[hrt]*cmttypes.Vote{}
	for _, f := range walFiles(t, dir) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := consensus.NewWALDecoder(bytes.NewReader(b))
		for {
			m, err := dec.Decode()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			v := walVote(m)
			if v == nil || !bytes.Equal(v.ValidatorAddress, pub.Address()) {
				continue
			}
			if err := v.Verify(chainID, pub); err != nil {
				t.Fatalf("WAL vote %v: %v", v, err)
			}
			k := hrt{v.Height, v.Round, v.Type}
			if prev, ok := seen[k]; ok {
				if !prev.BlockID.Equals(v.BlockID) || !bytes.Equal(prev.Signature, v.Signature) {
					t.Fatalf("two different votes of the validator at %d/%d/%v:\n%v\n%v", v.Height, v.Round, v.Type, prev, v)
				}
				continue
			}
			seen[k] = v
		}
	}
	return len(seen)
}

// walVote returns the vote in a WAL entry, if it is one: the entry's
// msgInfo (unexported) holds a *consensus.VoteMessage in its Msg field.
func walVote(m *consensus.TimedWALMessage) *cmttypes.Vote {
	if m == nil || m.Msg == nil {
		return nil
	}
	rv := reflect.ValueOf(m.Msg)
	if rv.Kind() != reflect.Struct {
		return nil
	}
	f := rv.FieldByName("Msg")
	if !f.IsValid() || !f.CanInterface() {
		return nil
	}
	if vm, ok := f.Interface().(*consensus.VoteMessage); ok {
		return vm.Vote
	}
	return nil
}

// walFiles lists a WAL group's files in order: wal.000, wal.001, …, then
// the head, wal.
func walFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "wal.[0-9]*"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	head := filepath.Join(dir, "wal")
	if _, err := os.Stat(head); err != nil {
		t.Fatalf("no WAL in %s: %v", dir, err)
	}
	return append(files, head)
}

// conflictLine matches what a node logs on a conflicting vote.
var conflictLine = regexp.MustCompile(`(?i)double.?sign|conflicting vote|ErrVoteConflictingVotes`)

func checkNodeLog(t *testing.T, n *node) {
	t.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, l := range n.conflicts {
		t.Errorf("the node logged: %s", l)
	}
}
