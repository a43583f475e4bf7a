package guard

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signbytes"
)

// The crash test runs this test binary as a signer that signs rising
// heights as fast as it can, prints every signature it releases, and is
// killed with SIGKILL at a random point; then it starts it again on the
// same state. SIGNERKIT_CRASH_RUNS sets the number of runs (default 50; the
// project's goal is 1,000).
const crashChainID = "crash-chain"

func crashMsg(t testing.TB, phase signbytes.Phase, h, r int64) []byte {
	// The block is a function of the height, the timestamp is the wall
	// clock: a restart asking for the last HRS again differs only in time.
	return msg(t, signbytes.CometBFT, crashChainID, phase, h, r, byte(h%250)+1, time.Now())
}

func crashRound(h int64) int64 { return h % 3 }

// TestCrashChild is the signer the crash test kills. It runs only when
// the parent sets GUARD_CRASH_DIR.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv("GUARD_CRASH_DIR")
	if dir == "" {
		t.Skip("run by TestCrash")
	}
	out := os.Stdout
	say := func(format string, args ...any) { fmt.Fprintf(out, format+"\n", args...) }
	ctx := context.Background()
	g, err := New(newKey(11), Config{Dir: dir, AutoInit: true})
	if err != nil {
		say("ERR %v", err)
		os.Exit(2)
	}
	st, err := g.State(ctx, crashChainID)
	if err != nil {
		say("ERR %v", err)
		os.Exit(2)
	}
	say("READY %d %d %d", st.Height, st.Round, st.Step)
	release := func(s Signed) {
		m, _ := signbytes.Parse(s.SignBytes)
		say("SIG %d %d %d %x %x", m.Height, m.Round, m.Step(), s.Signature, s.SignBytes)
	}
	if st.Step > 0 {
		phase := signbytes.Phase(st.Step)
		// A different block at the last HRS must be refused.
		other := msg(t, signbytes.CometBFT, crashChainID, phase, st.Height, st.Round, 0xff, time.Now())
		if s, err := g.SignBytes(ctx, other); err == nil {
			say("BUG conflicting data signed at %d/%d/%d: %x", st.Height, st.Round, st.Step, s.Signature)
		}
		// The same block with a new timestamp gets the stored signature.
		s, err := g.SignBytes(ctx, crashMsg(t, phase, st.Height, st.Round))
		if err != nil || !s.Cached {
			say("BUG re-request at %d/%d/%d: %+v, %v", st.Height, st.Round, st.Step, s, err)
		} else {
			release(s)
		}
	}
	h, step := st.Height, st.Step
	if h == 0 {
		h = 1
	}
	for i := 0; i < 1_000_000; i++ {
		step++
		if step > 3 {
			h, step = h+1, 1
		}
		s, err := g.SignBytes(ctx, crashMsg(t, signbytes.Phase(step), h, crashRound(h)))
		if err != nil {
			say("BUG sign %d/%d/%d: %v", h, crashRound(h), step, err)
			os.Exit(3)
		}
		release(s)
	}
	os.Exit(0)
}

type released struct {
	sig, bytes []byte
}

func TestCrash(t *testing.T) {
	if os.Getenv("GUARD_CRASH_DIR") != "" {
		t.Skip("in the child")
	}
	t.Parallel() // its children get a directory of their own, and the env var only in cmd.Env
	runs := 50
	if testing.Short() {
		runs = 10
	}
	if s := os.Getenv("SIGNERKIT_CRASH_RUNS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		runs = n
	}
	dir := t.TempDir()
	pub := newKey(11).Public().(ed25519.PublicKey)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	seen := map[[3]int64]released{}
	var last record
	total := 0
	for run := 0; run < runs; run++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$")
		cmd.Env = append(os.Environ(), "GUARD_CRASH_DIR="+dir)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 1<<16)
		ready := make(chan struct{})
		go func() {
			defer close(lines)
			// Only whole lines count: SIGKILL can cut the last one short,
			// and a signature half written was not released.
			r := bufio.NewReader(stdout)
			first := true
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					break
				}
				lines <- strings.TrimSuffix(l, "\n")
				if first {
					close(ready)
					first = false
				}
			}
			if first {
				close(ready)
			}
		}()
		// Kill at a random point: mostly while signing, sometimes while
		// the child starts and reads or creates its state.
		if run%4 == 0 {
			time.Sleep(time.Duration(rng.Int64N(int64(15 * time.Millisecond))))
		} else {
			<-ready
			time.Sleep(time.Duration(rng.Int64N(int64(5 * time.Millisecond))))
		}
		cmd.Process.Kill()
		cmd.Wait()
		var got []string
		for l := range lines {
			got = append(got, l)
		}

		b, err := os.ReadFile(filepath.Join(dir, stateFileName(crashChainID)))
		if os.IsNotExist(err) {
			if len(got) > 1 {
				t.Fatalf("run %d: signatures released but no state file", run)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		rec, _, err := decodeFile(b, crashChainID)
		if err != nil {
			t.Fatalf("run %d: state file unreadable after SIGKILL: %v", run, err)
		}
		if hrsLess(rec, last) {
			t.Fatalf("run %d: state regressed from %d/%d/%d to %d/%d/%d", run, last.Height, last.Round, last.Step, rec.Height, rec.Round, rec.Step)
		}
		last = rec
		for _, l := range got {
			f := strings.Fields(l)
			switch {
			case len(f) == 0:
			case f[0] == "BUG" || f[0] == "ERR":
				t.Fatalf("run %d: %s", run, l)
			case f[0] == "SIG" && len(f) == 6:
				var k [3]int64
				for i := range k {
					k[i], _ = strconv.ParseInt(f[1+i], 10, 64)
				}
				sig, _ := hex.DecodeString(f[4])
				sb, _ := hex.DecodeString(f[5])
				if !ed25519.Verify(pub, sb, sig) {
					t.Fatalf("run %d: bad signature: %s", run, l)
				}
				if prev, ok := seen[k]; ok && (string(prev.sig) != string(sig) || string(prev.bytes) != string(sb)) {
					t.Fatalf("run %d: two signatures for %v", run, k)
				}
				seen[k] = released{sig, sb}
				r := record{Height: k[0], Round: k[1], Step: int8(k[2])}
				if hrsLess(rec, r) {
					t.Fatalf("run %d: released %v but the state on disk is %d/%d/%d", run, k, rec.Height, rec.Round, rec.Step)
				}
				if !hrsLess(r, rec) && string(rec.Signature) != string(sig) {
					t.Fatalf("run %d: state's signature for %v is not the released one", run, k)
				}
				total++
			}
		}
	}
	t.Logf("%d runs, %d signatures released for %d height/round/steps; final state %d/%d/%d",
		runs, total, len(seen), last.Height, last.Round, last.Step)
	if len(seen) == 0 {
		t.Fatal("no signature released in any run")
	}
}
