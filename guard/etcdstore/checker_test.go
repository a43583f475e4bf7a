package etcdstore_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signerkit/signerkit/daemon"
	"github.com/signerkit/signerkit/guard/etcdstore/etcdtest"
	"github.com/signerkit/signerkit/privval/privvaltest"
	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer/signertest"
)

// result is one signer's answer to one request.
type result struct {
	ok        bool
	signBytes []byte
	sig       []byte
	err       string
}

// proc is a signer process (signerMain) and the validator sides'
// connections to it.
type proc struct {
	cmd   *exec.Cmd
	sock  string
	dead  chan struct{}
	mu    sync.Mutex
	conns map[int]*privvaltest.NativeClient // by validator side
}

// fleet is the checker's world: an etcd cluster, three signer processes,
// and between each signer and each member a proxy.
type fleet struct {
	t       *testing.T
	c       *etcdtest.Cluster
	dir     string
	proxies [][]*etcdtest.Proxy // [signer][member]
	procs   []*proc
}

func newFleet(t *testing.T, signers int) *fleet {
	f := &fleet{t: t, c: etcdtest.Start(t, 3), dir: t.TempDir(), procs: make([]*proc, signers)}
	for range signers {
		var ps []*etcdtest.Proxy
		for _, m := range f.c.Members {
			ps = append(ps, etcdtest.NewProxy(t, m.ClientAddr))
		}
		f.proxies = append(f.proxies, ps)
	}
	var eps []string
	for _, m := range f.c.Members {
		eps = append(eps, m.ClientAddr)
	}
	init := signerConfig(t.TempDir(), f.state(eps), "", time.Second)
	if err := daemon.InitStateOf(context.Background(), init, checkerChain, 1); err != nil {
		t.Fatal(err)
	}
	for i := range signers {
		f.start(i)
	}
	t.Cleanup(func() {
		for i := range f.procs {
			f.kill(i)
		}
	})
	return f
}

// state is the state setting of the cluster through the addresses eps.
func (f *fleet) state(eps []string) string {
	p := f.c.PKI
	return fmt.Sprintf("etcd://%s/checker?ca=%s&cert=%s&key=%s&attempt=300ms", strings.Join(eps, ","), p.CA, p.ClientCert, p.ClientKey)
}

// start starts signer i, a daemon on its own state directory that
// reaches etcd through its own proxies, and waits until it listens.
func (f *fleet) start(i int) {
	if f.procs[i] != nil {
		return
	}
	var eps []string
	for _, p := range f.proxies[i] {
		eps = append(eps, p.Addr)
	}
	stateDir := filepath.Join(f.dir, fmt.Sprint("signer", i))
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		f.t.Fatal(err)
	}
	sock := socketIn(f.dir)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "SK_ETCD_SIGNER=1", "SK_STATE="+f.state(eps), "SK_DEADLINE=1s", "SK_DIR="+stateDir, "SK_SOCK="+sock)
	cmd.Stderr = os.Stderr
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	p := &proc{cmd: cmd, sock: sock, dead: make(chan struct{}), conns: map[int]*privvaltest.NativeClient{}}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		ready <- sc.Scan() && sc.Text() == "ready"
		for sc.Scan() {
		}
		cmd.Wait()
		close(p.dead)
	}()
	select {
	case ok := <-ready:
		if !ok {
			<-p.dead
			f.t.Fatalf("signer %d did not start", i)
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		f.t.Fatalf("signer %d did not start within 30 s", i)
	}
	f.procs[i] = p
}

// kill SIGKILLs signer i, whatever it is doing.
func (f *fleet) kill(i int) {
	p := f.procs[i]
	if p == nil {
		return
	}
	f.procs[i] = nil
	p.cmd.Process.Kill()
	<-p.dead
	p.mu.Lock()
	for _, nc := range p.conns {
		nc.Close()
	}
	p.mu.Unlock()
}

// ask sends b from validator side to signer p, over that side's
// connection (dialled again after a failure), and waits up to d for its
// answer; ok is false when none came (the process died or is slow).
func (f *fleet) ask(p *proc, side int, b []byte, d time.Duration) (result, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	p.mu.Lock()
	nc := p.conns[side]
	p.mu.Unlock()
	if nc == nil {
		var err error
		if nc, err = privvaltest.DialNative(ctx, "unix", p.sock, nil); err != nil {
			return result{}, false
		}
		p.mu.Lock()
		p.conns[side] = nc
		p.mu.Unlock()
	}
	sig, err := nc.Sign(ctx, b)
	var rse *privvaltest.RemoteSignerError
	switch {
	case err == nil:
		return result{ok: true, signBytes: b, sig: sig}, true
	case errors.As(err, &rse):
		return result{err: rse.Description}, true
	}
	nc.Close()
	p.mu.Lock()
	if p.conns[side] == nc {
		delete(p.conns, side)
	}
	p.mu.Unlock()
	return result{}, false
}

// heal ends every fault: links pass, members and signers run, and a
// leader is elected.
func (f *fleet) heal() {
	for _, ps := range f.proxies {
		for _, p := range ps {
			p.Pass()
		}
	}
	for i := range f.c.Members {
		f.c.Restart(i)
	}
	for i := range f.procs {
		f.start(i)
	}
	f.c.WaitLeader(30 * time.Second)
}

// fault applies one random fault.
func (f *fleet) fault(rng *rand.Rand, mu *sync.Mutex) string {
	mu.Lock()
	defer mu.Unlock()
	nm, ns := len(f.c.Members), len(f.procs)
	m, s := rng.IntN(nm), rng.IntN(ns)
	switch rng.IntN(9) {
	case 0:
		f.c.Kill(m)
		return fmt.Sprintf("kill member %d", m)
	case 1:
		f.c.Restart(m)
		return fmt.Sprintf("restart member %d", m)
	case 2:
		return fmt.Sprintf("move leader to %d: %v", m, f.c.MoveLeader(m))
	case 3:
		if l := f.c.Leader(); l >= 0 {
			f.c.Kill(l)
			return fmt.Sprintf("kill leader %d", l)
		}
		return "no leader to kill"
	case 4:
		f.proxies[s][m].Drop()
		return fmt.Sprintf("drop signer %d to member %d", s, m)
	case 5:
		d := time.Duration(20+rng.IntN(300)) * time.Millisecond
		f.proxies[s][m].Delay(d)
		return fmt.Sprintf("delay signer %d to member %d by %v", s, m, d)
	case 6:
		for _, p := range f.proxies[s] {
			p.Pass()
		}
		return fmt.Sprintf("heal signer %d's links", s)
	case 7:
		f.kill(s)
		return fmt.Sprintf("SIGKILL signer %d", s)
	default:
		f.start(s)
		return fmt.Sprintf("start signer %d", s)
	}
}

// TestCheckerNeverDoubleSigns runs randomized fault schedules against 3
// signer daemons (processes running daemon.New's request path) sharing
// one key and one state in a 3-member etcd cluster, with 2 validator
// sides, each connected to every live daemon over tm2-remote, asking
// them at once for votes on different blocks. Safety: no height/round/step ever gets two
// different messages signed (every signature verified with
// crypto/ed25519). Liveness, twice per schedule, within 2 s
// (resumeBound): in its middle, with one member still down (a majority
// up) and one signer alive, that signer signs (midCheck); and at its end,
// with the faults ended, a signer signs again. SIGNERKIT_ETCD_SCHEDULES sets the number
// of schedules (make ha: 1,000); SIGNERKIT_ETCD_SEED the first seed.
func TestCheckerNeverDoubleSigns(t *testing.T) {
	n := 10
	if testing.Short() {
		n = 3
	}
	if v, err := strconv.Atoi(os.Getenv("SIGNERKIT_ETCD_SCHEDULES")); err == nil && v > 0 {
		n = v
	}
	seed0 := uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(os.Getenv("SIGNERKIT_ETCD_SEED"), 10, 64); err == nil {
		seed0 = v
	}
	t.Logf("schedules %d, first seed %d (SIGNERKIT_ETCD_SEED reruns them)", n, seed0)
	f := newFleet(t, 3)
	pub := signertest.NewFake(42).Public().(ed25519.PublicKey)
	signed := map[string][]byte{}
	var total, refusals, worst, worstMid = 0, 0, time.Duration(0), time.Duration(0)
	start := time.Now()
	for k := range n {
		seed := seed0 + uint64(k)
		s, r, live, mid := f.schedule(seed, int64(k)*10, pub, signed)
		total, refusals, worst, worstMid = total+s, refusals+r, max(worst, live), max(worstMid, mid)
		if t.Failed() {
			t.Fatalf("schedule seed %d failed", seed)
		}
		if (k+1)%50 == 0 {
			t.Logf("%d schedules done in %v", k+1, time.Since(start).Round(time.Second))
		}
	}
	t.Logf("%d schedules in %v: %d signatures released, %d refusals, 0 conflicts; slowest resume %v (faults healed), %v (one member down, one signer)",
		n, time.Since(start).Round(time.Second), total, refusals, worst, worstMid)
}

// schedule runs one schedule and returns the signatures released, the
// requests refused and how long signing took to resume, once the faults
// ended and in the middle check.
func (f *fleet) schedule(seed uint64, base int64, pub ed25519.PublicKey, signed map[string][]byte) (int, int, time.Duration, time.Duration) {
	t := f.t
	rng := rand.New(rand.NewPCG(seed, 1))
	chain := checkerChain
	var mu sync.Mutex // guards f.procs and the cluster against the faults
	done := make(chan struct{})
	var faults []string
	var fmu sync.Mutex
	addFault := func(rng *rand.Rand) {
		what := f.fault(rng, &mu)
		fmu.Lock()
		faults = append(faults, what)
		fmu.Unlock()
	}
	var fwg sync.WaitGroup
	fwg.Add(1)
	go func() {
		defer fwg.Done()
		frng := rand.New(rand.NewPCG(seed, 2))
		for {
			select {
			case <-done:
				return
			case <-time.After(time.Duration(10+frng.IntN(200)) * time.Millisecond):
				addFault(frng)
			}
		}
	}()
	var rmu sync.Mutex
	released, refused := 0, 0
	check := func(r result) {
		rmu.Lock()
		defer rmu.Unlock()
		if !r.ok {
			refused++
			return
		}
		m, err := signbytes.Parse(r.signBytes)
		if err != nil || !ed25519.Verify(pub, r.signBytes, r.sig) {
			t.Errorf("seed %d: a released signature that does not verify (%v)", seed, err)
			return
		}
		released++
		k := fmt.Sprintf("%s/%d/%d/%d", m.ChainID, m.Height, m.Round, m.Step())
		if old, ok := signed[k]; ok && !bytes.Equal(old, r.signBytes) {
			fmu.Lock()
			t.Errorf("seed %d: CONFLICT at %s: two different messages signed (faults: %v)", seed, k, faults)
			fmu.Unlock()
		}
		signed[k] = r.signBytes
	}
	heights := 2 + rng.IntN(4)
	mrng := rand.New(rand.NewPCG(seed, 3))
	midH, mid := base+int64(1+mrng.IntN(heights)), time.Duration(0)
	for h := base + 1; h <= base+int64(heights); h++ {
		for round := int64(0); round <= int64(rng.IntN(2)); round++ {
			for _, ph := range []signbytes.Phase{signbytes.Proposal, signbytes.Prevote, signbytes.Precommit} {
				if rng.IntN(3) == 0 {
					addFault(rng) // a fault between two steps, besides those at random times
				}
				var wg sync.WaitGroup
				mu.Lock()
				procs := append([]*proc(nil), f.procs...)
				mu.Unlock()
				for side := range 2 {
					b := checkerVote(t, chain, ph, h, round, byte(1+side))
					for _, p := range procs {
						if p == nil {
							continue
						}
						wg.Add(1)
						go func() {
							defer wg.Done()
							if r, ok := f.ask(p, side, b, 3*time.Second); ok {
								check(r)
							}
						}()
					}
				}
				wg.Wait()
			}
		}
		if h == midH {
			mu.Lock()
			what := f.degrade(mrng)
			fmu.Lock()
			faults = append(faults, what)
			fmu.Unlock()
			mid = f.resume(seed, chain, h, midRound, f.alive(), check, what)
			mu.Unlock()
		}
	}
	close(done)
	fwg.Wait()
	f.heal()
	return released, refused, f.resume(seed, chain, base+int64(heights+1), 0, 0, check, "faults healed"), mid
}

// midRound is the round of the middle check's vote: above every round a
// schedule asks for at its height, below the next height.
const midRound = 50

// degrade sets the middle check's world, faults paused (the caller holds
// the schedule's lock): one member killed and the others running (a
// majority up, a leader elected), and exactly one signer alive, with its
// links to the running members passing. The other signers are SIGKILLed
// and their links are left as the faults made them. It returns what it
// did.
func (f *fleet) degrade(rng *rand.Rand) string {
	down, s := rng.IntN(len(f.c.Members)), rng.IntN(len(f.procs))
	for i := range f.c.Members {
		if i == down {
			f.c.Kill(i)
		} else {
			f.c.Restart(i)
			f.proxies[s][i].Pass()
		}
	}
	for i := range f.procs {
		if i != s {
			f.kill(i)
		}
	}
	f.c.WaitLeader(30 * time.Second)
	f.start(s)
	return fmt.Sprintf("middle check: member %d down, signer %d alone", down, s)
}

// alive returns the index of the first live signer.
func (f *fleet) alive() int {
	for i, p := range f.procs {
		if p != nil {
			return i
		}
	}
	f.t.Fatal("no live signer")
	return -1
}

// resumeBound is the liveness bound: 2 s, the requirement, in make ha
// (SIGNERKIT_ETCD_SCHEDULES set); in make test, on machines busy with the
// other packages' tests, 10 s, the slowest resume logged either way.
func resumeBound() time.Duration {
	if os.Getenv("SIGNERKIT_ETCD_SCHEDULES") != "" {
		return 2 * time.Second
	}
	return 10 * time.Second
}

// resume measures how long signer i takes to sign a prevote at height h
// and round r, above every vote asked for before; more than resumeBound
// fails the test. when says in what world (for the failure's message).
func (f *fleet) resume(seed uint64, chain string, h, round int64, i int, check func(result), when string) time.Duration {
	start, bound := time.Now(), resumeBound()
	b := checkerVote(f.t, chain, signbytes.Prevote, h, round, 1)
	for {
		r, ok := f.ask(f.procs[i], 0, b, 2*time.Second)
		if ok {
			check(r)
		}
		if ok && r.ok {
			return time.Since(start)
		}
		if time.Since(start) > bound {
			f.t.Errorf("seed %d: no signature within %v (%s): %v", seed, bound, when, r.err)
			return time.Since(start)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func checkerVote(t testing.TB, chain string, ph signbytes.Phase, h, r int64, tag byte) []byte {
	m := signbytes.Message{Format: signbytes.TM2, Phase: ph, Height: h, Round: r, Timestamp: baseTime, ChainID: chain,
		BlockID: signbytes.BlockID{Hash: bytes.Repeat([]byte{tag}, 32), PartSetHeader: signbytes.PartSetHeader{Total: 1, Hash: bytes.Repeat([]byte{tag}, 32)}}}
	if ph == signbytes.Proposal {
		m.POLRound = -1
	}
	b, err := m.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
