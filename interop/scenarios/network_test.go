package scenarios

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gnolang/gno/gno.land/pkg/gnoland"
	abci "github.com/gnolang/gno/tm2/pkg/bft/abci/types"
	bftcfg "github.com/gnolang/gno/tm2/pkg/bft/config"
	bft "github.com/gnolang/gno/tm2/pkg/bft/types"
	gnoed25519 "github.com/gnolang/gno/tm2/pkg/crypto/ed25519"
	p2ptypes "github.com/gnolang/gno/tm2/pkg/p2p/types"

	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/interop/internal/testbin"
	"github.com/signerkit/signerkit/keybase"
	"github.com/signerkit/signerkit/signer"
)

const (
	chainID = "scenarios"
	// timeoutCommit is the nodes' consensus.timeout_commit: gno's default
	// of 5 s would make 100 blocks take over 8 minutes.
	timeoutCommit = 500 * time.Millisecond
	kbPassEnv     = "SK_SCENARIO_KB_PASS"
	hsmPassEnv    = "SK_SCENARIO_HSM_PASS"
)

// Backend kinds a validator's key sits behind.
const (
	inProcess = "in process"
	keybasePS = "keybase per-sign" // gnokey's keybase, bcrypt at cost 12 on every sign
	keybaseUO = "keybase"          // the same keybase, decrypted once at start
	ledgerSim = "Ledger"           // cmd/ledgersim, Nano S Plus, real time, our transport
	ledgerGo  = "Ledger, ledger-go stall"
	yubiHSM   = "YubiHSM 2" // cmd/yubihsmsim, real time
)

// validator is one gnoland node and the signerkit daemon holding its key.
type validator struct {
	idx      int
	kind     string
	protocol string // tm2-tmkms (the node listens) or tm2-remote (signerkit listens)
	seed     []byte
	pub      ed25519.PublicKey
	home     string // the node's data dir
	rpc      string // http://127.0.0.1:port
	p2p      int
	nodeID   string
	sock     string
	skCfg    string
	env      []string
	node     *proc
	daemon   *proc
	metrics  string
}

func newValidators(t *testing.T, kinds [4]string, protocol string) []*validator {
	t.Helper()
	vals := make([]*validator, len(kinds))
	for i, k := range kinds {
		seed := bytes.Repeat([]byte{byte(0x71 + i)}, ed25519.SeedSize)
		vals[i] = &validator{
			idx: i, kind: k, protocol: protocol, seed: seed,
			pub:  ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey),
			home: t.TempDir(), rpc: fmt.Sprintf("127.0.0.1:%d", loopbackPort(t)), p2p: loopbackPort(t),
		}
		// A Unix socket's path must stay under 108 bytes.
		sockDir, err := os.MkdirTemp("", "sk-sock-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(sockDir) })
		vals[i].sock = filepath.Join(sockDir, "pv.sock")
	}
	return vals
}

// writeGenesis writes one genesis for the four validators, with equal
// power, no transactions and time_iota_ms 1 (see the package doc).
func writeGenesis(t *testing.T, vals []*validator) string {
	t.Helper()
	gen := &bft.GenesisDoc{
		GenesisTime: time.Now().UTC(),
		ChainID:     chainID,
		ConsensusParams: abci.ConsensusParams{Block: &abci.BlockParams{
			MaxTxBytes: 1_000_000, MaxDataBytes: 2_000_000, MaxGas: 3_000_000_000, TimeIotaMS: 1,
		}},
		AppState: gnoland.DefaultGenState(),
	}
	for _, v := range vals {
		var pk gnoed25519.PubKeyEd25519
		copy(pk[:], v.pub)
		gen.Validators = append(gen.Validators, bft.GenesisValidator{
			Address: pk.Address(), PubKey: pk, Power: 10, Name: fmt.Sprintf("val%d", v.idx),
		})
	}
	path := filepath.Join(t.TempDir(), "genesis.json")
	if err := gen.SaveAs(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// configureNode writes the node's config.toml and node key.
func configureNode(t *testing.T, v *validator, commit time.Duration) {
	t.Helper()
	cfg, err := bftcfg.LoadOrMakeConfigWithOptions(v.home)
	if err != nil {
		t.Fatal(err)
	}
	nk, err := p2ptypes.GeneratePersistedNodeKey(cfg.NodeKeyFile())
	if err != nil {
		t.Fatal(err)
	}
	v.nodeID = nk.ID().String()
	cfg.Moniker = fmt.Sprintf("val%d", v.idx)
	cfg.RPC.ListenAddress = "tcp://" + v.rpc
	cfg.P2P.ListenAddress = fmt.Sprintf("tcp://127.0.0.1:%d", v.p2p)
	cfg.P2P.FlushThrottleTimeout = 10 * time.Millisecond
	cfg.P2P.AllowDuplicateIP = true // four nodes on 127.0.0.1
	cfg.Consensus.TimeoutCommit = commit
	if v.protocol == "tm2-remote" {
		cfg.Consensus.PrivValidator.RemoteSigner.ServerAddress = "unix://" + v.sock
	} else {
		cfg.Consensus.PrivValidator.TmkmsListener.ListenAddr = "unix://" + v.sock
		cfg.Consensus.PrivValidator.TmkmsListener.ChainID = chainID
	}
	if err := bftcfg.WriteConfigFile(filepath.Join(v.home, "config", "config.toml"), cfg); err != nil {
		t.Fatal(err)
	}
}

// setPeers makes every node a persistent peer of every other.
func setPeers(t *testing.T, vals []*validator) {
	t.Helper()
	for _, v := range vals {
		var peers []string
		for _, o := range vals {
			if o != v {
				peers = append(peers, fmt.Sprintf("%s@127.0.0.1:%d", o.nodeID, o.p2p))
			}
		}
		path := filepath.Join(v.home, "config", "config.toml")
		cfg, err := bftcfg.LoadConfigFile(path)
		if err != nil {
			t.Fatal(err)
		}
		cfg.P2P.PersistentPeers = strings.Join(peers, ",")
		if err := bftcfg.WriteConfigFile(path, cfg); err != nil {
			t.Fatal(err)
		}
	}
}

// keyURI puts the validator's key behind its backend and returns the URI
// signerkit opens it by.
func keyURI(t *testing.T, v *validator, dir string) string {
	t.Helper()
	seedHex := hex.EncodeToString(v.seed)
	switch v.kind {
	case inProcess:
		path := filepath.Join(dir, "validator.pem")
		if err := inprocess.WriteKeyFile(path, ed25519.NewKeyFromSeed(v.seed)); err != nil {
			t.Fatal(err)
		}
		return "inprocess:file=" + path
	case keybasePS, keybaseUO:
		kb := filepath.Join(dir, "gnokey")
		st, err := keybase.OpenStore(context.Background(), keybase.Config{Dir: kb, Secret: signer.SecretEnv(kbPassEnv)})
		if err != nil {
			t.Fatal(err)
		}
		_, err = st.ImportKey(context.Background(), ed25519.NewKeyFromSeed(v.seed), signer.Ed25519, "validator")
		st.Close()
		if err != nil {
			t.Fatal(err)
		}
		v.env = append(v.env, kbPassEnv+"="+os.Getenv(kbPassEnv))
		uri := "keybase:dir=" + kb + ";label=validator?pin-source=env:" + kbPassEnv
		if v.kind == keybasePS {
			uri += "&mode=per-sign"
		}
		return uri
	case ledgerSim, ledgerGo:
		addr := startSimulator(t, "ledgersim", "-addr", "127.0.0.1:0", "-seed", seedHex, "-profile", "nanosplus", "-time", "realtime")
		if v.kind == ledgerGo {
			return "ledgersim:speculos=" + addr + "?stall=ledger-go"
		}
		return "ledgersim:speculos=" + addr
	case yubiHSM:
		url := startSimulator(t, "yubihsmsim", "-addr", "127.0.0.1:0", "-seed", seedHex, "-key-id", "64",
			"-label", "validator", "-time", "realtime", "-password", "password")
		v.env = append(v.env, hsmPassEnv+"=password")
		return "yubihsm:connector=" + url + ";auth-key=1;label=validator?pin-source=env:" + hsmPassEnv
	}
	t.Fatalf("no backend %q", v.kind)
	return ""
}

// configureDaemon writes the validator's signerkit.toml and its state.
func configureDaemon(t *testing.T, v *validator) {
	t.Helper()
	if isFloor(v.kind) { // floor_test.go: this binary, no config
		v.env = floorEnvOf(v)
		return
	}
	dir := t.TempDir()
	uri := keyURI(t, v, dir)
	if err := os.Mkdir(filepath.Join(dir, "state"), 0o700); err != nil {
		t.Fatal(err)
	}
	v.skCfg = filepath.Join(dir, "signerkit.toml")
	cfg := fmt.Sprintf(`state_dir = %q
metrics_addr = "127.0.0.1:0"
log_level = "info"

[[chain]]
id = %q
protocol = %q
key = %q

  [[chain.validator]]
  addr = %q
`, filepath.Join(dir, "state"), chainID, v.protocol, uri, "unix://"+v.sock)
	if err := os.WriteFile(v.skCfg, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(skCommand(t, "signerkit"), "state", "init", "-config", v.skCfg, "-height", "1").CombinedOutput()
	if err != nil {
		t.Fatalf("signerkit state init: %v\n%s", err, out)
	}
}

var metricsLine = regexp.MustCompile(`msg=metrics url=(http://[0-9.:]+)/metrics`)

func startDaemon(t *testing.T, v *validator) {
	t.Helper()
	cmd := exec.Command(skCommand(t, "signerkit"), "start", "-config", v.skCfg)
	if isFloor(v.kind) {
		cmd = exec.Command(os.Args[0])
	}
	cmd.Env = append(os.Environ(), v.env...)
	v.daemon = start(t, fmt.Sprintf("signerkit %d", v.idx), cmd)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && !v.daemon.exited() {
		if m := metricsLine.FindStringSubmatch(v.daemon.out.String()); m != nil {
			v.metrics = m[1]
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("signerkit %d serves no metrics:\n%s", v.idx, tailOf(v.daemon.out.String(), 4000))
}

func startNode(t *testing.T, v *validator, root, genesis string) {
	t.Helper()
	cmd := exec.Command(gnolandCommand(t), "start", "-gnoroot-dir", root, "-data-dir", v.home,
		"-genesis", genesis, "-log-level", "info", "-log-format", "json")
	cmd.Dir = v.home
	v.node = start(t, fmt.Sprintf("gnoland %d", v.idx), cmd)
}

// gnoRootDir is a gno root with the standard libraries and no example
// packages, so that genesis takes seconds.
func gnoRootDir(t *testing.T) string { return testbin.GnoRoot(t) }

// height is the node's latest block height from its RPC /status, or -1.
func height(rpc string) int64 {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://" + rpc + "/status")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	var st struct {
		Result struct {
			SyncInfo struct {
				LatestBlockHeight string `json:"latest_block_height"`
			} `json:"sync_info"`
		} `json:"result"`
	}
	if json.NewDecoder(resp.Body).Decode(&st) != nil {
		return -1
	}
	h, err := strconv.ParseInt(st.Result.SyncInfo.LatestBlockHeight, 10, 64)
	if err != nil {
		return -1
	}
	return h
}

// waitHeight waits, at most within, until every node is at h or past it.
func waitHeight(t *testing.T, vals []*validator, h int64, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		low := int64(-1)
		for i, v := range vals {
			if v.node.exited() {
				t.Fatalf("gnoland %d exited (%v):\n%s", v.idx, v.node.err, tailOf(v.node.out.String(), 4000))
			}
			if hv := height(v.rpc); i == 0 || hv < low {
				low = hv
			}
		}
		if low >= h {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the network is not at height %d within %v (lowest node at %d)", h, within, low)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
