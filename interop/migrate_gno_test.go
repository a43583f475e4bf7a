package interop

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gnolang/gno/tm2/pkg/bft/consensus"
	"github.com/gnolang/gno/tm2/pkg/bft/store"
	gnotypes "github.com/gnolang/gno/tm2/pkg/bft/types"
	walm "github.com/gnolang/gno/tm2/pkg/bft/wal"
	gnoed25519 "github.com/gnolang/gno/tm2/pkg/crypto/ed25519"
	tm2db "github.com/gnolang/gno/tm2/pkg/db"
	_ "github.com/gnolang/gno/tm2/pkg/db/pebbledb"

	"github.com/signerkit/signerkit/guard/migrate"
	"github.com/signerkit/signerkit/interop/internal/testbin"
)

// The migration end to end on gno: a real gnoland v1.7.1 node (the
// gnoland command of the gno module this test module requires) signs with
// its own FilePV, stops, and comes back with signerkit on its tmkms
// listener after `signerkit keys import` and `signerkit state import` of
// its own secrets. Building gnoland takes minutes on a fresh module cache;
// the test runs when SK_INTEROP_GNOLAND is set (make interop-migrate).

const gnoMigrateChain = "migrate-gno"

func gnolandBin(t *testing.T) string {
	return toolBin(t, "github.com/gnolang/gno/gno.land/cmd/gnoland")
}

// gnoRoot makes a gno root that has the standard libraries and no example
// packages, so that the node's genesis is made in seconds.
func gnoRoot(t *testing.T) string { return testbin.GnoRoot(t) }

// gnoland runs a gnoland subcommand in home.
func gnoland(t *testing.T, home string, args ...string) {
	t.Helper()
	cmd := exec.Command(gnolandBin(t), args...)
	cmd.Dir = home
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gnoland %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func startGnoNode(t *testing.T, home, root string) *nodeProc {
	t.Helper()
	cmd := exec.Command(gnolandBin(t), "start", "-lazy", "-chainid", gnoMigrateChain, "-gnoroot-dir", root,
		"-data-dir", "gnoland-data", "-genesis", "genesis.json", "-log-level", "info")
	cmd.Dir = home
	rpc, err := os.ReadFile(filepath.Join(home, "rpc"))
	if err != nil {
		t.Fatal(err)
	}
	return startNodeProc(t, "gnoland", cmd, "http://"+string(rpc))
}

// TestMigrateGnoNode migrates a node stopped by SIGTERM, and one killed
// (SIGKILL) just after it signed a proposal or prevote.
func TestMigrateGnoNode(t *testing.T) {
	if os.Getenv("SK_INTEROP_GNOLAND") == "" {
		t.Skip("builds and runs gnoland: set SK_INTEROP_GNOLAND=1 (make interop-migrate)")
	}
	t.Run("sigterm", func(t *testing.T) { migrateGno(t, false) })
	t.Run("sigkill", func(t *testing.T) { migrateGno(t, true) })
}

func migrateGno(t *testing.T, kill bool) {
	root := gnoRoot(t)
	home, data, cfg := initGnoHome(t)
	keyFile := filepath.Join(data, "secrets", "priv_validator_key.json")
	stateFile := filepath.Join(data, "secrets", "priv_validator_state.json")

	// 1. The node signs 20 heights with its own FilePV, then stops.
	n := startGnoNode(t, home, root)
	n.waitHeight(t, 20, 120*time.Second)
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
	if err != nil || old.Format != migrate.Gno || old.Height < 20 {
		t.Fatalf("the node's state file: %+v %v\n%s", old, err, b)
	}

	// 2. signerkit takes its key and state; the node's tmkms listener
	// waits for it on a Unix socket.
	skDir := t.TempDir()
	sock := filepath.Join(skDir, "gno.sock")
	keyURI := "inprocess:file=" + filepath.Join(skDir, "validator.pem")
	cfgPath := filepath.Join(skDir, "signerkit.toml")
	writeMigrateConfig(t, cfgPath, skDir, gnoMigrateChain, "tm2-tmkms", keyURI, "unix://"+sock)
	out := skRun(t, "keys", "import", "-from", keyFile, "-to", keyURI)
	pub := pubFromKeysOutput(t, out)
	// As docs/migrate.md says, the key leaves the node's host.
	if err := os.Rename(keyFile, filepath.Join(skDir, "offline_priv_validator_key.json")); err != nil {
		t.Fatal(err)
	}
	out = skRun(t, "state", "import", "-config", cfgPath, "-from", stateFile)
	if want := fmt.Sprintf("gno FilePV state: last signed %d/%d/", old.Height, old.Round); !strings.Contains(out, want) {
		t.Fatalf("state import: want %q in\n%s", want, out)
	}
	t.Logf("state import:\n%s", out)
	gnoland(t, home, "config", "set", "-config-path", cfg, "consensus.priv_validator.tmkms_listener.chain_id", gnoMigrateChain)
	gnoland(t, home, "config", "set", "-config-path", cfg, "consensus.priv_validator.tmkms_listener.listen_addr", "unix://"+sock)

	// 3. The node comes back with signerkit as its signer and goes on.
	sk := skStart(t, cfgPath)
	n = startGnoNode(t, home, root)
	last := n.waitHeight(t, old.Height+5, 120*time.Second)
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
	signed := sk.metricSum(t, "signerkit_requests_total", "outcome", "signed")
	cached := sk.metricSum(t, "signerkit_requests_total", "outcome", "cached")
	t.Logf("signerkit answered %v requests from the stored signature", cached)
	if kill && old.Step < 3 && cached < 1 {
		t.Errorf("killed after its %s at %d/%d, the node did not ask for it again", stepWord(old.Step), old.Height, old.Round)
	}
	sk.stop(t)
	if signed < 10 {
		t.Fatalf("signerkit signed %v requests: the node did not sign through it", signed)
	}
	if m := regexp.MustCompile(`(?i)double.?sign|conflicting`).FindString(n.log.String()); m != "" {
		t.Errorf("the node's log mentions %q", m)
	}
	checkGnoChain(t, data, gnoMigrateChain, pub, old.Height)
}

var hexKey = regexp.MustCompile(`\bed25519:([0-9a-f]{64})\b`)

// pubFromKeysOutput takes the public key keys import printed, in hex.
func pubFromKeysOutput(t *testing.T, out string) ed25519.PublicKey {
	t.Helper()
	m := hexKey.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no public key in:\n%s", out)
	}
	pub, err := hex.DecodeString(m[1])
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

// checkGnoChain reads the stopped node's own block store and WAL: every
// commit has one precommit, ours, verifying under crypto/ed25519 and gno's
// own Vote.Verify (gno v1.7.1's blocks have no evidence field, and it runs
// no evidence pool); the WAL has no two different votes of ours at one
// height/round/type, and has votes from both signers.
func checkGnoChain(t *testing.T, data, chainID string, pub ed25519.PublicKey, imported int64) {
	t.Helper()
	db, err := tm2db.NewDB("blockstore", tm2db.PebbleDBBackend, filepath.Join(data, "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	bs := store.NewBlockStore(db)
	var gpub gnoed25519.PubKeyEd25519
	copy(gpub[:], pub)
	top := bs.Height()
	if top < 25 {
		t.Fatalf("block store height %d", top)
	}
	for h := int64(1); h < top; h++ {
		c := bs.LoadBlockCommit(h)
		if c == nil || len(c.Precommits) != 1 || c.Precommits[0] == nil {
			t.Fatalf("height %d: commit %v", h, c)
		}
		v := c.GetVote(0)
		if !ed25519.Verify(pub, v.SignBytes(chainID), v.Signature) {
			t.Fatalf("height %d: the precommit's signature does not verify", h)
		}
		if err := v.Verify(chainID, gpub); err != nil {
			t.Fatalf("height %d: %v", h, err)
		}
		if blk := bs.LoadBlock(h); blk == nil || blk.LastCommit == nil {
			t.Fatalf("height %d: block %v", h, blk)
		}
	}
	before, after := checkGnoWAL(t, filepath.Join(data, "wal", "cs.wal"), chainID, gpub, imported)
	if before == 0 || after == 0 {
		t.Fatalf("the WAL has %d votes of ours up to height %d and %d after: want both", before, imported, after)
	}
	t.Logf("%d commits verified; WAL: %d votes of ours up to height %d, %d after", top-1, before, imported, after)
}

func checkGnoWAL(t *testing.T, dir, chainID string, gpub gnoed25519.PubKeyEd25519, imported int64) (before, after int) {
	t.Helper()
	files := walFiles(t, dir)
	addr := gpub.Address()
	type hrt struct {
		h int64
		r int
		t gnotypes.SignedMsgType
	}
	seen := map[hrt]*gnotypes.Vote{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := walm.NewWALReader(bytes.NewReader(b), 1<<20)
		for {
			m, _, err := dec.ReadMessage()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			v := gnoWALVote(m)
			if v == nil || v.ValidatorAddress != addr {
				continue
			}
			if err := v.Verify(chainID, gpub); err != nil {
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

// gnoWALVote returns the vote in a WAL entry, if it is one (a msgInfo,
// unexported, holding a *consensus.VoteMessage).
func gnoWALVote(m *walm.TimedWALMessage) *gnotypes.Vote {
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
	if vm, ok := f.Interface().(*consensus.VoteMessage); ok {
		return vm.Vote
	}
	return nil
}

// initGnoHome makes a gnoland node home for one validator: its config
// (100 ms blocks, RPC and P2P on free loopback ports, the RPC address
// kept in home/rpc) and its secrets. It returns the home, its data
// directory and the config file.
func initGnoHome(t *testing.T) (home, data, cfg string) {
	t.Helper()
	home = t.TempDir()
	data = filepath.Join(home, "gnoland-data")
	cfg = filepath.Join(data, "config", "config.toml")
	gnoland(t, home, "config", "init", "-config-path", cfg)
	rpc := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	if err := os.WriteFile(filepath.Join(home, "rpc"), []byte(rpc), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, kv := range [][2]string{
		{"consensus.timeout_commit", "100ms"},
		{"rpc.laddr", "tcp://" + rpc},
		{"p2p.laddr", fmt.Sprintf("tcp://127.0.0.1:%d", freePort(t))},
	} {
		gnoland(t, home, "config", "set", "-config-path", cfg, kv[0], kv[1])
	}
	gnoland(t, home, "secrets", "init", "-data-dir", filepath.Join(data, "secrets"))
	return home, data, cfg
}
