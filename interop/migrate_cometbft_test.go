package interop

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
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

	"github.com/signerkit/signerkit/guard/migrate"
	"github.com/signerkit/signerkit/interop/internal/testbin"
)

// The migration end to end: a real CometBFT v0.38 node (the cometbft
// command built from the module this test module requires, a separate
// process) signs with its own FilePV, stops, and comes back with
// signerkit as its signer after `signerkit keys import` and `signerkit
// state import` of its own files, as docs/migrate.md tells an operator.

// toolBuild is a command of a module go.mod lists as a tool, built once.
type toolBuild struct {
	once sync.Once
	path string
	err  error
}

var toolBuilds sync.Map // package path → *toolBuild

// toolBin builds the command pkg once and returns its path. The binary
// is kept in the user's cache directory under its module's version, so
// later runs reuse it (gnoland takes minutes to build).
func toolBin(t *testing.T, pkg string) string {
	t.Helper()
	v, _ := toolBuilds.LoadOrStore(pkg, &toolBuild{})
	b := v.(*toolBuild)
	b.once.Do(func() { b.path, b.err = buildTool(pkg) })
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

func buildTool(pkg string) (string, error) { return testbin.BuildTool(pkg) }

func cmtBin(t *testing.T) string { return toolBin(t, "github.com/cometbft/cometbft/cmd/cometbft") }

func freePort(t *testing.T) int { return testbin.FreePort(t) }

// nodeProc is a node process: cometbft or gnoland.
type nodeProc struct {
	cmd  *exec.Cmd
	log  *lockedBuffer
	done chan error
	rpc  string
}

// startCmtNode starts `cometbft start` on home with the kvstore app,
// and extra flags.
func startCmtNode(t *testing.T, home string, extra ...string) *nodeProc {
	t.Helper()
	rpc := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	args := append([]string{"start", "--home", home, "--proxy_app", "kvstore", "--rpc.laddr", "tcp://" + rpc,
		"--p2p.laddr", fmt.Sprintf("tcp://127.0.0.1:%d", freePort(t))}, extra...)
	return startNodeProc(t, "cometbft", exec.Command(cmtBin(t), args...), "http://"+rpc)
}

// startNodeProc starts cmd, a node whose RPC is at rpc, killed at the
// test's end.
func startNodeProc(t *testing.T, name string, cmd *exec.Cmd, rpc string) *nodeProc {
	t.Helper()
	n := &nodeProc{cmd: cmd, log: &lockedBuffer{}, done: make(chan error, 1), rpc: rpc}
	n.cmd.Stdout, n.cmd.Stderr = n.log, n.log
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { n.done <- n.cmd.Wait() }()
	t.Cleanup(func() {
		_ = n.cmd.Process.Kill()
		<-n.done
		n.done <- nil
		if t.Failed() {
			t.Logf("%s log (last 6000 bytes):\n%s", name, tail(n.log.String(), 6000))
		}
	})
	return n
}

func tail(s string, n int) string { return testbin.Tail(s, n) }

// waitHeight waits (bounded) until the node's latest block is at least h.
func (n *nodeProc) waitHeight(t *testing.T, h int64, within time.Duration) int64 {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		st, err := migrate.FetchStatus(ctx, nil, n.rpc)
		cancel()
		if err == nil && st.LatestHeight >= h {
			return st.LatestHeight
		}
		select {
		case err := <-n.done:
			n.done <- err
			t.Fatalf("the node exited (%v) before height %d", err, h)
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the node is not at height %d within %v (last: %+v, %v)", h, within, st, err)
		}
	}
}

// stop sends SIGTERM and waits for the node to exit.
func (n *nodeProc) stop(t *testing.T) {
	t.Helper()
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-n.done:
		n.done <- err
	case <-time.After(30 * time.Second):
		t.Fatal("the node did not stop")
	}
}

// skRun runs a signerkit command and returns its output.
func skRun(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(skBin(t, "signerkit"), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("signerkit %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestMigrateCometBFTNode migrates a node stopped by SIGTERM between
// heights, and one killed (SIGKILL) as soon as it reaches height 20, most
// often in the middle of height 21: on its restart the node's WAL replay
// may ask for a vote its FilePV signed again, which signerkit answers from
// the imported state.
func TestMigrateCometBFTNode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs CometBFT nodes")
	}
	t.Run("sigterm", func(t *testing.T) { migrateCmt(t, false) })
	t.Run("sigkill", func(t *testing.T) { migrateCmt(t, true) })
}

func migrateCmt(t *testing.T, kill bool) {
	home := t.TempDir()
	if out, err := exec.Command(cmtBin(t), "init", "--home", home).CombinedOutput(); err != nil {
		t.Fatalf("cometbft init: %v\n%s", err, out)
	}
	fastBlocks(t, filepath.Join(home, "config", "config.toml"))
	chainID := genesisChainID(t, filepath.Join(home, "config", "genesis.json"))
	keyFile := filepath.Join(home, "config", "priv_validator_key.json")
	stateFile := filepath.Join(home, "data", "priv_validator_state.json")
	pub := ed25519.PublicKey(privval.LoadFilePV(keyFile, stateFile).Key.PubKey.Bytes())

	// 1. The node signs 20 heights with its own FilePV, then stops.
	n := startCmtNode(t, home)
	n.waitHeight(t, 20, 90*time.Second)
	if kill {
		killMidHeight(t, n, stateFile)
	} else {
		n.stop(t)
	}
	b, err := os.ReadFile(stateFile)
	if err != nil {
		t.Fatal(err)
	}
	old, err := migrate.Parse(b)
	if err != nil || old.Height < 20 {
		t.Fatalf("the node's state file: %+v %v\n%s", old, err, b)
	}

	// 2. signerkit takes its key and state.
	skDir := t.TempDir()
	sock := filepath.Join(skDir, "pv.sock")
	keyURI := "inprocess:file=" + filepath.Join(skDir, "validator.pem")
	cfgPath := filepath.Join(skDir, "signerkit.toml")
	writeMigrateConfig(t, cfgPath, skDir, chainID, "cometbft-v0.38", keyURI, "unix://"+sock)
	out := skRun(t, "keys", "import", "-from", keyFile, "-to", keyURI)
	if !strings.Contains(out, fmt.Sprintf("ed25519:%x", []byte(pub))) {
		t.Fatalf("keys import shows another key:\n%s", out)
	}
	// As docs/migrate.md says, the key leaves the node's host.
	if err := os.Rename(keyFile, filepath.Join(skDir, "offline_priv_validator_key.json")); err != nil {
		t.Fatal(err)
	}
	out = skRun(t, "state", "import", "-config", cfgPath, "-from", stateFile)
	want := fmt.Sprintf("last signed %d/%d/", old.Height, old.Round)
	if !strings.Contains(out, want) {
		t.Fatalf("state import: want %q in\n%s", want, out)
	}
	t.Logf("state import:\n%s", out)

	// 3. The node comes back with signerkit as its signer and goes on.
	sk := skStart(t, cfgPath)
	n = startCmtNode(t, home, "--priv_validator_laddr", "unix://"+sock)
	last := n.waitHeight(t, old.Height+5, 90*time.Second)
	if last < 25 {
		n.waitHeight(t, 25, 60*time.Second)
	}
	checkNodeRefusesStale(t, cfgPath, b, n.rpc)
	n.stop(t)
	// A node stopped after a step of a height it has not committed asks
	// again, once restarted, for an earlier step of that height and round
	// (its proposal after its prevote): the guard refuses it, as FilePV
	// would (docs/migrate.md). Only such refusals are allowed, and the WAL
	// check below shows nothing conflicting was signed.
	checkRefusedOnlyEarlierSteps(t, sk, old.Height, old.Round, old.Step)
	cached := sk.metricSum(t, "signerkit_requests_total", "outcome", "cached")
	t.Logf("signerkit answered %v requests from the stored signature", cached)
	if kill && old.Step < 3 && cached < 1 {
		t.Errorf("killed after its %s at %d/%d, the node did not ask for it again", stepWord(old.Step), old.Height, old.Round)
	}
	sk.stop(t)
	if m := regexp.MustCompile(`(?i)double.?sign|conflicting`).FindString(n.log.String()); m != "" {
		t.Errorf("the node's log mentions %q", m)
	}
	checkCmtChain(t, home, chainID, pub, old.Height)
}

// fastBlocks makes the node commit a block every ~100 ms.
func fastBlocks(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := regexp.MustCompile(`(?m)^timeout_commit = .*$`).ReplaceAllString(string(b), `timeout_commit = "100ms"`)
	if s == string(b) {
		t.Fatal("config.toml has no timeout_commit")
	}
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

func genesisChainID(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		ChainID string `json:"chain_id"`
	}
	if err := json.Unmarshal(b, &g); err != nil || g.ChainID == "" {
		t.Fatalf("genesis chain_id: %v", err)
	}
	return g.ChainID
}

func writeMigrateConfig(t *testing.T, path, dir, chainID, protocol, keyURI, addr string) {
	t.Helper()
	if err := os.Mkdir(filepath.Join(dir, "state"), 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`state_dir = %q
metrics_addr = "127.0.0.1:0"
log_level = "debug"

[[chain]]
id = %q
protocol = %q
key = %q

  [[chain.validator]]
  addr = %q
`, filepath.Join(dir, "state"), chainID, protocol, keyURI, addr)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
}

// checkCmtChain reads the stopped node's own stores: every commit has one
// signature, ours, verifying under crypto/ed25519 and CometBFT's own
// Vote.Verify; no block carries evidence and the evidence pool holds
// none; the consensus WAL has no two different votes of ours at one
// height/round/type, and has votes from both signers.
func checkCmtChain(t *testing.T, home, chainID string, pub ed25519.PublicKey, imported int64) {
	t.Helper()
	dataDir := filepath.Join(home, "data")
	bdb, err := dbm.NewDB("blockstore", dbm.GoLevelDBBackend, dataDir)
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	bs := store.NewBlockStore(bdb)
	top := bs.Height()
	if top < 25 {
		t.Fatalf("block store height %d", top)
	}
	for h := int64(1); h < top; h++ {
		c := bs.LoadBlockCommit(h)
		if c == nil || len(c.Signatures) != 1 || c.Signatures[0].BlockIDFlag != cmttypes.BlockIDFlagCommit {
			t.Fatalf("height %d: commit %v", h, c)
		}
		if !ed25519.Verify(pub, c.VoteSignBytes(chainID, 0), c.Signatures[0].Signature) {
			t.Fatalf("height %d: the commit's signature does not verify", h)
		}
		v := c.GetVote(0)
		if err := v.Verify(chainID, cmtPubKey(pub)); err != nil {
			t.Fatalf("height %d: %v", h, err)
		}
		if blk := bs.LoadBlock(h); blk == nil || len(blk.Evidence.Evidence) != 0 {
			t.Fatalf("height %d: block %v carries evidence", h, blk)
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
		t.Fatalf("pending evidence: %v", ev)
	}
	before, after := checkWAL(t, filepath.Join(dataDir, "cs.wal"), chainID, pub, imported)
	if before == 0 || after == 0 {
		t.Fatalf("the WAL has %d votes of ours up to height %d and %d after: want both", before, imported, after)
	}
	t.Logf("%d commits verified; WAL: %d votes of ours up to height %d, %d after", top-1, before, imported, after)
}

// checkWAL decodes every WAL file and checks our votes: one per
// height/round/type, each verifying.
func checkWAL(t *testing.T, dir, chainID string, pub ed25519.PublicKey, imported int64) (before, after int) {
	t.Helper()
	files := walFiles(t, dir)
	addr := cmtPubKey(pub).Address()
	type hrt struct {
		h int64
		r int32
		t cmtproto.SignedMsgType
	}
	seen := map[hrt]*cmttypes.Vote{}
	for _, f := range files {
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
			if v == nil || !bytes.Equal(v.ValidatorAddress, addr) {
				continue
			}
			if err := v.Verify(chainID, cmtPubKey(pub)); err != nil {
				t.Fatalf("WAL vote %v: %v", v, err)
			}
			k := hrt{v.Height, v.Round, v.Type}
			if prev, ok := seen[k]; ok {
				if !prev.BlockID.Equals(v.BlockID) || !bytes.Equal(prev.Signature, v.Signature) {
					t.Fatalf("two different votes of ours at %d/%d/%v:\n%v\n%v", v.Height, v.Round, v.Type, prev, v)
				}
				continue
			}
			seen[k] = v
			if v.Height <= imported {
				before++
			} else {
				after++
			}
		}
	}
	return before, after
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

func cmtPubKey(pub ed25519.PublicKey) cmted25519.PubKey { return cmted25519.PubKey(pub) }

// metricSum sums name{labels…} over all its series on /metrics (an
// unlabelled metric is one series).
func (p *skProc) metricSum(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	resp, err := http.Get(p.metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var sum float64
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, name+"{") && !strings.HasPrefix(l, name+" ") {
			continue
		}
		ok := true
		for i := 0; i+1 < len(labels); i += 2 {
			ok = ok && strings.Contains(l, labels[i]+`="`+labels[i+1]+`"`)
		}
		if v, err := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64); ok && err == nil {
			sum += v
		}
	}
	return sum
}

// killMidHeight kills the node (SIGKILL) as soon as its FilePV state shows
// a proposal or prevote signed and the precommit not yet, polling the
// file; after 10 s without catching one it kills it anyway.
func killMidHeight(t *testing.T, n *nodeProc, stateFile string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(stateFile); err == nil {
			if st, err := migrate.Parse(b); err == nil && st.Height > 20 && st.Step < 3 {
				break
			}
		}
		time.Sleep(200 * time.Microsecond)
	}
	_ = n.cmd.Process.Kill()
	n.done <- <-n.done
}

// walFiles lists a WAL group's files in order: wal.000, wal.001, …, then
// the head, wal.
func walFiles(t *testing.T, dir string) []string { return testbin.WALFiles(t, dir) }

func stepWord(s int8) string { return [...]string{"nothing", "proposal", "prevote", "precommit"}[s] }

// checkNodeRefusesStale imports the old signer's state file again, now
// behind the chain, with -node naming the running node: signerkit reads
// the real node's /status and refuses it, before touching the state.
func checkNodeRefusesStale(t *testing.T, cfgPath string, stale []byte, rpc string) {
	t.Helper()
	from := filepath.Join(t.TempDir(), "stale_state.json")
	if err := os.WriteFile(from, stale, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(skBin(t, "signerkit"), "state", "import", "-config", cfgPath, "-from", from, "-node", rpc).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "behind the chain's latest height") {
		t.Fatalf("state import -node of a stale state: %v\n%s", err, out)
	}
}
