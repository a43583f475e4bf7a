package threshold_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/threshold"
	"github.com/signerkit/signerkit/threshold/frost"
	"github.com/signerkit/signerkit/threshold/thresholdtest"
)

// multiCoordRuns is the number of randomized runs of
// TestCoordinatorsNeverDoubleSign: 20 by default, SIGNERKIT_MULTICOORD_RUNS
// for more (make multicoord runs 1,000).
func multiCoordRuns(t *testing.T) int {
	if s := os.Getenv("SIGNERKIT_MULTICOORD_RUNS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("SIGNERKIT_MULTICOORD_RUNS=%q", s)
		}
		return n
	}
	return 20
}

// coordinators starts a 2-of-3 cluster whose parties keep their nonces and
// (when guarded) their double-sign state in directories, so that a
// restart keeps both, and returns two coordinators with their own
// certificates.
func coordinators(t *testing.T, guarded bool) (*thresholdtest.Cluster, [2]*threshold.Signer) {
	t.Helper()
	dir := t.TempDir()
	sub := func(kind string, id frost.Identifier) string {
		d := filepath.Join(dir, fmt.Sprintf("%s-%d", kind, id))
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		return d
	}
	opts := thresholdtest.Options{Coordinators: []string{"coordinator-2"}, NonceCapacity: 1024,
		NonceFS: func(id frost.Identifier) guard.FS { return guard.DirFS(sub("nonces", id)) }}
	if guarded {
		opts.Guard = func(id frost.Identifier) *guard.Config {
			return &guard.Config{Dir: sub("guard", id), AutoInit: true, ChainIDs: []string{"c1"}}
		}
	}
	c, err := thresholdtest.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	var ss [2]*threshold.Signer
	for i := range ss {
		cfg := c.Config
		cfg.PoolSize, cfg.PartyTimeout = 16, time.Second
		if i == 1 {
			cert, err := c.Cert("coordinator-2", true)
			if err != nil {
				t.Fatal(err)
			}
			cfg.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: c.CAPool()}
		}
		if ss[i], err = threshold.New(cfg); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ss[i].Close() })
	}
	return c, ss
}

// conflicting returns two prevotes for different blocks at the same
// height, round and step.
func conflicting(t *testing.T, h int64, round int64) [2][]byte {
	t.Helper()
	var out [2][]byte
	for i := range out {
		b, err := signbytes.Message{Format: signbytes.CometBFT, Phase: signbytes.Prevote, Height: h, Round: round, ChainID: "c1",
			BlockID: signbytes.BlockID{Hash: bytes.Repeat([]byte{byte(i + 1)}, 32), PartSetHeader: signbytes.PartSetHeader{Total: 1, Hash: make([]byte, 32)}}}.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		out[i] = b
	}
	return out
}

// raceConflicting has each coordinator ask for its own message at once,
// after a random delay of up to 3 ms, while (in some runs) a party
// crashes and restarts. It returns how many valid signatures came back.
func raceConflicting(t *testing.T, rng *rand.Rand, c *thresholdtest.Cluster, ss [2]*threshold.Signer, pub ed25519.PublicKey, msgs [2][]byte) (int, [2]error) {
	t.Helper()
	delays := [2]time.Duration{time.Duration(rng.IntN(3000)) * time.Microsecond, time.Duration(rng.IntN(3000)) * time.Microsecond}
	crash := frost.Identifier(0)
	if rng.IntN(3) == 0 {
		crash = frost.Identifier(1 + rng.IntN(3))
	}
	crashAfter := time.Duration(rng.IntN(4000)) * time.Microsecond
	var wg sync.WaitGroup
	var sigs [2][]byte
	var errs [2]error
	for i := range ss {
		wg.Go(func() {
			time.Sleep(delays[i])
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			sigs[i], errs[i] = ss[i].SignContext(ctx, msgs[i])
		})
	}
	if crash != 0 {
		time.Sleep(crashAfter)
		c.Stop(crash)
	}
	wg.Wait()
	if crash != 0 {
		if err := c.Restart(crash); err != nil {
			t.Fatalf("restart party %d: %v", crash, err)
		}
	}
	valid := 0
	for i := range sigs {
		if errs[i] == nil {
			if !ed25519.Verify(pub, msgs[i], sigs[i]) {
				t.Fatalf("coordinator %d returned a signature that does not verify", i+1)
			}
			valid++
		}
	}
	return valid, errs
}

// TestCoordinatorsNeverDoubleSign: two coordinators over the same three
// guarded parties ask, at the same height, round and step, for
// conflicting prevotes, at random delays, with a random party crashing
// and restarting in a third of the runs. Never do both get a valid
// signature: any two pairs of the three parties share one, whose guard
// refuses the second message (docs/threshold.md). A refusal is the
// party's double-sign error.
func TestCoordinatorsNeverDoubleSign(t *testing.T) {
	c, ss := coordinators(t, true)
	pub := c.Config.Public.GroupPublicKey()
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("SIGNERKIT_MULTICOORD_SEED"); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("SIGNERKIT_MULTICOORD_SEED: %v", err)
		}
	}
	t.Logf("seed %d (SIGNERKIT_MULTICOORD_SEED replays it)", seed)
	rng := rand.New(rand.NewPCG(seed, 27))
	runs := multiCoordRuns(t)
	signed, refused := 0, 0
	for run := range runs {
		msgs := conflicting(t, int64(run+1), int64(run%3))
		valid, errs := raceConflicting(t, rng, c, ss, pub, msgs)
		if valid > 1 {
			t.Fatalf("run %d: DOUBLE SIGN: both coordinators got a valid signature for conflicting votes", run)
		}
		signed += valid
		for _, err := range errs {
			if errors.Is(err, signer.ErrDoubleSign) {
				refused++
			}
		}
	}
	t.Logf("%d runs: %d signed, %d refused as double signs", runs, signed, refused)
	if signed == 0 {
		t.Fatal("no run signed at all: the test shows nothing")
	}
}

// TestCoordinatorsUnguardedDoubleSign is the control: without the
// parties' guards, the same race gives both coordinators a signature, so
// TestCoordinatorsNeverDoubleSign would see a double sign if the guards
// did not stop it.
func TestCoordinatorsUnguardedDoubleSign(t *testing.T) {
	c, ss := coordinators(t, false)
	pub := c.Config.Public.GroupPublicKey()
	rng := rand.New(rand.NewPCG(1, 2))
	for run := range 10 {
		if valid, _ := raceConflicting(t, rng, c, ss, pub, conflicting(t, int64(run+1), 0)); valid == 2 {
			return
		}
	}
	t.Fatal("unguarded parties never gave both coordinators a signature in 10 runs")
}
