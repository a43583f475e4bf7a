package sidebyside

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/signerkit/signerkit/netshape"
)

// topo places the parties (or cosigners) 1, 2 and 3 on hosts[0..2] of a
// netshape profile; the node, its relay and signerkit's coordinator run on
// hosts[0], beside party 1, as an operator would put them (and horcrux's
// cosigner 1 likewise). A nil profile is loopback: nothing shaped.
type topo struct {
	name  string
	prof  *netshape.Profile
	hosts [3]string
}

func topologies() []topo {
	abc := [3]string{"a", "b", "c"}
	return []topo{
		{name: "loopback"},
		{name: "same-zone", prof: netshape.SameZone(), hosts: abc},
		{name: "cross-europe", prof: netshape.CrossEurope(), hosts: abc},
		{name: "trio", prof: netshape.Trio(), hosts: [3]string{netshape.GermanyWestCentral, netshape.SwedenCentral, netshape.EastUS}},
	}
}

// link returns the link between the hosts of parties server and client
// (0-based), shaped at server's end, or nil when they share a machine or
// nothing is shaped.
func (tp topo) link(server, client int) *netshape.Link {
	if tp.prof == nil || server == client {
		return nil
	}
	l := tp.prof.Link(tp.hosts[server], tp.hosts[client])
	return &l
}

// quorumRTT is the round trip from the node's host to the nearer of the
// two other parties: a 2-of-3 sign beside party 1 needs one of them.
func (tp topo) quorumRTT() time.Duration {
	if tp.prof == nil {
		return 0
	}
	return min(tp.prof.RTT(tp.hosts[0], tp.hosts[1]), tp.prof.RTT(tp.hosts[0], tp.hosts[2]))
}

// addr returns target as seen from client's host: target itself, or a
// shaped proxy to it.
func (tp topo) addr(t *testing.T, target string, server, client int) string {
	if l := tp.link(server, client); l != nil {
		return shapedProxy(t, target, *l)
	}
	return target
}

// keys holds what is made once per run from the template's validator
// key: signerkit's shares and certificates, horcrux's ECIES keys.
type keys struct {
	tp                    *template
	skKeys, skCerts, ecis string
}

func newKeys(t *testing.T, tp *template, withHorcrux bool) *keys {
	t.Helper()
	dir := t.TempDir()
	k := &keys{tp: tp, skKeys: filepath.Join(dir, "sk-keys"), skCerts: filepath.Join(dir, "sk-certs"), ecis: filepath.Join(dir, "ecies")}
	run(t, skBin(t), "threshold", "certs", "-out", k.skCerts, "-parties", "3", "-coordinators", "1")
	out := run(t, skBin(t), "threshold", "split", "-from", tp.keyFile, "-out", k.skKeys, "-t", "2", "-n", "3")
	if !strings.Contains(out, fmt.Sprintf("%x", []byte(tp.pub))) {
		t.Logf("threshold split printed (want the validator's key %x in it):\n%s", []byte(tp.pub), out)
	}
	if withHorcrux {
		run(t, horcruxBin(t), "create-ecies-shards", "--shards", "3", "--out", k.ecis)
	}
	return k
}

// signerSet is the running processes of one signer, and what a kill test
// may kill.
type signerSet struct {
	name  string
	procs []*proc
	kills []killTarget
}

type killTarget struct {
	name string
	pick func(t *testing.T) *proc
}

// skDaemon writes a signerkit daemon config for chainID with keyURI,
// dialing validator, makes its state at height 1 and returns the
// (unstarted) daemon.
func skDaemon(t *testing.T, dir, chainID, keyURI, validator string) *proc {
	t.Helper()
	cfg := filepath.Join(dir, "signerkit.toml")
	identity := filepath.Join(dir, "identity.pem")
	if err := os.MkdirAll(filepath.Join(dir, "state"), 0o700); err != nil {
		t.Fatal(err)
	}
	run(t, skBin(t), "keys", "generate", "-to", "inprocess:file="+identity)
	writeFile(t, cfg, fmt.Appendf(nil, `state_dir = %q
identity_key = %q
metrics_addr = "127.0.0.1:0"
log_level = "info"

[[chain]]
id = %q
protocol = "cometbft-v0.38"
key = %q

  [[chain.validator]]
  addr = "tcp://%s"
  allow_any = true
`, filepath.Join(dir, "state"), identity, chainID, keyURI, validator))
	run(t, skBin(t), "state", "init", "-config", cfg, "-height", "1")
	return newProc(t, "signerkit start", skBin(t), "start", "-config", cfg)
}

// startInprocess: signerkit with the key in one process (inprocess).
func (k *keys) startInprocess(t *testing.T, chainID string, r *relay) *signerSet {
	t.Helper()
	dir := t.TempDir()
	keyURI := "inprocess:file=" + filepath.Join(dir, "validator.pem")
	run(t, skBin(t), "keys", "import", "-from", k.tp.keyFile, "-to", keyURI)
	d := skDaemon(t, dir, chainID, keyURI, r.listen(t, nil))
	d.start(t)
	return &signerSet{name: "signerkit, one key", procs: []*proc{d}}
}

// startSKThreshold: three `signerkit party` processes and a `signerkit
// start` coordinator whose key is threshold:config=…. With local, the
// coordinator holds share 1 itself (`[local]`) and only parties 2 and 3
// run as processes: three processes, one share each, horcrux's layout
// (its leader is a cosigner holding a shard).
func (k *keys) startSKThreshold(t *testing.T, chainID string, tp topo, r *relay, local bool) *signerSet {
	t.Helper()
	dir := t.TempDir()
	s := &signerSet{name: kindSKThreshold}
	first := 1
	var parties strings.Builder
	if local {
		s.name, first = kindSKLocal, 2
		fmt.Fprintf(&parties, "[local]\nshare = %q\nnonce_dir = %q\n\n",
			filepath.Join(k.skKeys, "share-1.pem"), filepath.Join(dir, "coordinator", "nonces"))
	}
	for i := first; i <= 3; i++ {
		pdir := filepath.Join(dir, fmt.Sprintf("party-%d", i))
		addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
		cfg := filepath.Join(pdir, "party.toml")
		writeFile(t, cfg, fmt.Appendf(nil, `share = %q
listen = %q
cert = %q
key = %q
ca = %q
coordinators = ["coordinator-1"]
state_dir = %q
chains = [%q]
metrics_addr = "127.0.0.1:0"
`, filepath.Join(k.skKeys, fmt.Sprintf("share-%d.pem", i)), addr,
			filepath.Join(k.skCerts, fmt.Sprintf("party-%d.crt", i)), filepath.Join(k.skCerts, fmt.Sprintf("party-%d.key", i)),
			filepath.Join(k.skCerts, "ca.crt"), filepath.Join(pdir, "state"), chainID))
		run(t, skBin(t), "party", "-config", cfg, "-init-height", "1")
		p := newProc(t, fmt.Sprintf("signerkit party %d", i), skBin(t), "party", "-config", cfg)
		p.start(t)
		s.procs = append(s.procs, p)
		s.kills = append(s.kills, killTarget{fmt.Sprintf("party %d", i), func(*testing.T) *proc { return p }})
		fmt.Fprintf(&parties, "[[party]]\nid = %d\naddr = %q\n\n", i, tp.addr(t, addr, i-1, 0))
	}
	tcfg := filepath.Join(dir, "threshold.toml")
	writeFile(t, tcfg, fmt.Appendf(nil, "public = %q\ncert = %q\nkey = %q\nca = %q\n\n%s",
		filepath.Join(k.skKeys, "public.pem"), filepath.Join(k.skCerts, "coordinator-1.crt"),
		filepath.Join(k.skCerts, "coordinator-1.key"), filepath.Join(k.skCerts, "ca.crt"), parties.String()))
	d := skDaemon(t, filepath.Join(dir, "coordinator"), chainID, "threshold:config="+tcfg, r.listen(t, nil))
	d.start(t)
	s.procs = append(s.procs, d)
	coord := killTarget{"coordinator", func(*testing.T) *proc { return d }}
	s.kills = append(append([]killTarget{coord}, s.kills...), coord)
	return s
}

// startHorcrux: three `horcrux start` cosigners (threshold mode, 2 of 3),
// their Ed25519 shards made by horcrux from the validator key for
// chainID, each dialing the node through the relay.
func (k *keys) startHorcrux(t *testing.T, chainID string, tp topo, r *relay) *signerSet {
	t.Helper()
	dir := t.TempDir()
	hx := horcruxBin(t)
	shards := filepath.Join(dir, "shards")
	run(t, hx, "create-ed25519-shards", "--chain-id", chainID, "--key-file", k.tp.keyFile, "--threshold", "2", "--shards", "3", "--out", shards)
	var ports [3]string
	for i := range ports {
		ports[i] = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	}
	s := &signerSet{name: "horcrux 2-of-3"}
	homes := make([]string, 3)
	for i := range 3 {
		home := filepath.Join(dir, fmt.Sprintf("cosigner-%d", i+1))
		homes[i] = home
		for _, f := range []string{
			filepath.Join(k.ecis, fmt.Sprintf("cosigner_%d", i+1), "ecies_keys.json"),
			filepath.Join(shards, fmt.Sprintf("cosigner_%d", i+1), chainID+"_shard.json"),
		} {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(home, filepath.Base(f)), b)
		}
		var cos strings.Builder
		for j := range 3 {
			addr := ports[j]
			if j != i {
				addr = tp.addr(t, ports[j], j, i)
			}
			fmt.Fprintf(&cos, "  - shardID: %d\n    p2pAddr: tcp://%s\n", j+1, addr)
		}
		writeFile(t, filepath.Join(home, "config.yaml"), fmt.Appendf(nil, `signMode: threshold
thresholdMode:
  threshold: 2
  cosigners:
%s  grpcTimeout: 500ms
  raftTimeout: 500ms
chainNodes:
- privValAddr: tcp://%s
debugAddr: 127.0.0.1:%d
grpcAddr: ""
maxReadSize: 1048576
`, cos.String(), r.listen(t, tp.link(0, i)), freePort(t)))
		if err := os.MkdirAll(filepath.Join(home, "state"), 0o700); err != nil {
			t.Fatal(err)
		}
		p := newProc(t, fmt.Sprintf("horcrux cosigner %d", i+1), hx, "start", "--home", home)
		p.start(t)
		s.procs = append(s.procs, p)
	}
	leader := func(t *testing.T) int {
		for _, h := range homes {
			out, err := execOut(hx, "leader", "--home", h)
			if m := leaderLine.FindStringSubmatch(out); err == nil && m != nil {
				id, _ := strconv.Atoi(m[1])
				if id >= 1 && id <= 3 {
					return id - 1
				}
			}
		}
		t.Fatal("no cosigner names a leader")
		return 0
	}
	s.kills = []killTarget{
		{"leader", func(t *testing.T) *proc { return s.procs[leader(t)] }},
		{"a follower", func(t *testing.T) *proc { return s.procs[(leader(t)+1)%3] }},
		{"the other follower", func(t *testing.T) *proc { return s.procs[(leader(t)+2)%3] }},
		{"leader", func(t *testing.T) *proc { return s.procs[leader(t)] }},
	}
	return s
}

var leaderLine = regexp.MustCompile(`Current leader: (\d+)`)
