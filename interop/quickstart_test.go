package interop

import (
	"crypto/ed25519"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/signerkit/signerkit/guard/migrate"
)

// The quick start, as docs/quickstart.md gives it: each list of commands
// is read from the page and run line by line. The signerkit commands run
// through the signerkit binary built from this tree (in place of the
// list's git clone and make install); the node's commands through its
// real binary, its start through the harness (which adds what a test
// needs and an operator does not: free ports, fast blocks, the kvstore
// app, a gno root without examples). The node must then sign blocks
// through signerkit, with no conflicting vote in its own stores.

var quickstartMark = regexp.MustCompile("(?s)<!-- quickstart: ([a-z-]+) -->\n```sh\n(.*?)```")

// quickstartSteps returns the commands of docs/quickstart.md's list name,
// which must take at most 10 (11 for gno over TCP, as the page says).
func quickstartSteps(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", "quickstart.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range quickstartMark.FindAllStringSubmatch(string(b), -1) {
		if m[1] != name {
			continue
		}
		steps := strings.Split(strings.TrimSpace(m[2]), "\n")
		limit := 10
		if strings.HasSuffix(name, "-tcp") {
			limit = 11
		}
		if len(steps) > limit {
			t.Errorf("docs/quickstart.md's %s takes %d commands, more than %d", name, len(steps), limit)
		}
		return steps
	}
	t.Fatalf("docs/quickstart.md has no list %q", name)
	return nil
}

// quickstart runs a list's commands for one chain.
type quickstart struct {
	t    *testing.T
	home string // $HOME and ~ of the commands
	dir  string // their working directory
	root string // gno: the gno root
	n    *nodeProc
	sk   *skProc
	pub  ed25519.PublicKey // printed by keys import
	// imported is the height of the state file state import read.
	imported int64
	listen   string // see listenAddr
}

func newQuickstart(t *testing.T) *quickstart {
	h := t.TempDir()
	return &quickstart{t: t, home: h, dir: h}
}

// run runs the steps. A node started before the list's last command is
// stopped once it has made a few blocks, as the page says.
func (q *quickstart) run(steps []string) {
	for i, s := range steps {
		q.step(s)
		if f := strings.Fields(s); i < len(steps)-1 && len(f) > 1 && f[1] == "start" && f[0] != "signerkit" {
			q.n.waitHeight(q.t, 3, 120*time.Second)
			q.n.stop(q.t)
		}
	}
}

func (q *quickstart) step(line string) {
	t := q.t
	t.Helper()
	line = strings.NewReplacer("$HOME", q.home, "~/", q.home+"/", "127.0.0.1:26659", q.listenAddr()).Replace(line)
	line = q.substitute(line)
	f := strings.Fields(strings.TrimSuffix(strings.TrimSpace(line), "&"))
	t.Logf("$ %s", strings.Join(f, " "))
	switch {
	case f[0] == "git" || f[0] == "make":
		// The signerkit binary is built from this tree instead.
	case f[0] == "systemctl" && f[1] == "stop":
		q.n.stop(t)
	case f[0] == "signerkit" && f[1] == "start":
		q.sk = skStart(t, testMetricsAddr(t, f[3]))
	case f[0] == "signerkit":
		out := q.exec(skBin(t, "signerkit"), f[1:]...)
		if f[1] == "keys" && f[2] == "import" {
			q.pub = pubFromKeysOutput(t, out)
		}
		if f[1] == "state" && f[2] == "import" {
			from := f[slices.Index(f, "-from")+1]
			if !filepath.IsAbs(from) {
				from = filepath.Join(q.dir, from)
			}
			q.importedHeight(from)
		}
	case f[0] == "cometbft" && f[1] == "start":
		q.n = startCmtNode(t, f[3], f[4:]...)
	case f[0] == "cometbft":
		q.exec(cmtBin(t), f[1:]...)
		if f[1] == "init" {
			fastBlocks(t, filepath.Join(f[3], "config", "config.toml"))
		}
	case f[0] == "gnoland" && f[1] == "start":
		q.n = q.startGno(f[2:])
	case f[0] == "gnoland":
		q.exec(gnolandBin(t), f[1:]...)
		if f[1] == "config" && f[2] == "init" {
			q.gnoTestConfig()
		}
	case f[0] == "mv":
		q.exec("mv", f[1:]...)
	default:
		t.Fatalf("the test does not know how to run %q", line)
	}
}

var cmdSubst = regexp.MustCompile(`\$\((signerkit [^)]*)\)`)

// substitute runs each $(signerkit …) in line, as the shell would, and
// puts its output in its place.
func (q *quickstart) substitute(line string) string {
	return cmdSubst.ReplaceAllStringFunc(line, func(m string) string {
		f := strings.Fields(cmdSubst.FindStringSubmatch(m)[1])
		return strings.TrimSpace(q.exec(skBin(q.t, "signerkit"), f[1:]...))
	})
}

// listenAddr stands for the lists' 127.0.0.1:26659, a free port here.
func (q *quickstart) listenAddr() string {
	if q.listen == "" {
		q.listen = fmt.Sprintf("127.0.0.1:%d", freePort(q.t))
	}
	return q.listen
}

// exec runs a command in q.dir with HOME set to q.home.
func (q *quickstart) exec(bin string, args ...string) string {
	q.t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = q.dir
	cmd.Env = append(os.Environ(), "HOME="+q.home)
	out, err := cmd.CombinedOutput()
	if err != nil {
		q.t.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, out)
	}
	return string(out)
}

// testMetricsAddr sets the config's metrics_addr to a free port: init's
// default, 26661, may be taken on a machine running other tests.
func testMetricsAddr(t *testing.T, cfgPath string) string {
	t.Helper()
	b, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	s := regexp.MustCompile(`(?m)^metrics_addr = .*$`).ReplaceAllString(string(b), `metrics_addr = "127.0.0.1:0"`)
	if err := os.WriteFile(cfgPath, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfgPath
}

// check waits for the node to sign 5 more heights through signerkit, stops
// both, and checks what signerkit counted.
func (q *quickstart) check(atLeast int64) {
	t := q.t
	h := q.n.waitHeight(t, 1, 120*time.Second)
	q.n.waitHeight(t, max(h+5, atLeast), 120*time.Second)
	q.n.stop(t)
	if r := q.sk.metricSum(t, "signerkit_double_sign_refusals_total"); r > 0 {
		t.Errorf("signerkit refused %v double signs", r)
	}
	if s := q.sk.metricSum(t, "signerkit_requests_total", "outcome", "signed"); s < 10 {
		t.Fatalf("signerkit signed %v requests: the node did not sign through it", s)
	}
	q.sk.stop(t)
	if m := regexp.MustCompile(`(?i)double.?sign|conflicting`).FindString(q.n.log.String()); m != "" {
		t.Errorf("the node's log mentions %q", m)
	}
}

// importedHeight parses the state file state import read (the node may
// write a new one when it starts without its key).
func (q *quickstart) importedHeight(from string) {
	q.t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		q.t.Fatal(err)
	}
	st, err := migrate.Parse(b)
	if err != nil || st.Height < 1 {
		q.t.Fatalf("the FilePV state %s: %+v %v", from, st, err)
	}
	q.imported = st.Height
}

// TestQuickstartCometBFT runs docs/quickstart.md's CometBFT lists: a new
// validator, and one that signed 20 heights with its FilePV first.
func TestQuickstartCometBFT(t *testing.T) {
	if testing.Short() {
		t.Skip("runs CometBFT nodes")
	}
	t.Run("new", func(t *testing.T) {
		q := newQuickstart(t)
		q.run(quickstartSteps(t, "cometbft-new"))
		q.check(25)
		node := filepath.Join(q.home, ".cometbft")
		checkCmtChain(t, node, genesisChainID(t, filepath.Join(node, "config", "genesis.json")), q.pub, 1)
	})
	t.Run("migrate", func(t *testing.T) {
		q := newQuickstart(t)
		node := filepath.Join(q.home, ".cometbft")
		q.exec(cmtBin(t), "init", "--home", node)
		fastBlocks(t, filepath.Join(node, "config", "config.toml"))
		q.n = startCmtNode(t, node)
		q.n.waitHeight(t, 20, 90*time.Second)
		q.run(quickstartSteps(t, "cometbft-migrate"))
		q.check(25)
		checkCmtChain(t, node, genesisChainID(t, filepath.Join(node, "config", "genesis.json")), q.pub, q.imported)
	})
}

// gnoTestConfig sets what the test needs of a gno node's config: free
// ports and fast blocks.
func (q *quickstart) gnoTestConfig() {
	rpc := fmt.Sprintf("127.0.0.1:%d", freePort(q.t))
	if err := os.WriteFile(filepath.Join(q.dir, "rpc"), []byte(rpc), 0o600); err != nil {
		q.t.Fatal(err)
	}
	for _, kv := range [][2]string{
		{"consensus.timeout_commit", "100ms"},
		{"rpc.laddr", "tcp://" + rpc},
		{"p2p.laddr", fmt.Sprintf("tcp://127.0.0.1:%d", freePort(q.t))},
	} {
		q.exec(gnolandBin(q.t), "config", "set", kv[0], kv[1])
	}
}

func (q *quickstart) startGno(args []string) *nodeProc {
	q.t.Helper()
	if q.root == "" {
		q.root = gnoRoot(q.t)
	}
	cmd := exec.Command(gnolandBin(q.t), append(append([]string{"start"}, args...), "-gnoroot-dir", q.root, "-log-level", "info")...)
	cmd.Dir = q.dir
	cmd.Env = append(os.Environ(), "HOME="+q.home)
	rpc, err := os.ReadFile(filepath.Join(q.dir, "rpc"))
	if err != nil {
		q.t.Fatal(err)
	}
	return startNodeProc(q.t, "gnoland", cmd, "http://"+string(rpc))
}

// TestQuickstartGno runs docs/quickstart.md's gno lists (builds gnoland:
// SK_INTEROP_GNOLAND=1, make interop-migrate).
func TestQuickstartGno(t *testing.T) {
	if os.Getenv("SK_INTEROP_GNOLAND") == "" {
		t.Skip("builds and runs gnoland: set SK_INTEROP_GNOLAND=1 (make interop-migrate)")
	}
	t.Run("new", func(t *testing.T) {
		q := newQuickstart(t)
		q.exec(gnolandBin(t), "config", "init") // -lazy keeps it: the test's ports
		q.gnoTestConfig()
		q.run(quickstartSteps(t, "gno-new"))
		q.check(25)
		checkGnoChain(t, filepath.Join(q.dir, "gnoland-data"), "dev", q.pub, q.imported)
	})
	for _, list := range []string{"gno-migrate", "gno-migrate-tcp"} {
		t.Run(strings.TrimPrefix(list, "gno-"), func(t *testing.T) {
			q := newQuickstart(t)
			q.exec(gnolandBin(t), "config", "init")
			q.gnoTestConfig()
			q.exec(gnolandBin(t), "secrets", "init")
			q.n = q.startGno([]string{"-lazy", "-chainid", "dev"})
			q.n.waitHeight(t, 20, 120*time.Second)
			q.run(quickstartSteps(t, list))
			q.check(25)
			checkGnoChain(t, filepath.Join(q.dir, "gnoland-data"), "dev", q.pub, q.imported)
		})
	}
}
