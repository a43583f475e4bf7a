package scenarios

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	rsserver "github.com/gnolang/gno/tm2/pkg/bft/privval/signer/remote/server"
	gnocrypto "github.com/gnolang/gno/tm2/pkg/crypto"
	gnoed25519 "github.com/gnolang/gno/tm2/pkg/crypto/ed25519"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/privval"
	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// The floor remote signers: the least a remote signer can cost on this
// machine, run in place of a signerkit daemon, by this test binary itself
// (TestMain) as a child process, so that the node sees the same socket and
// process boundary.
//
//   - floorGno: gno's own remote-signer server (tm2-remote), its key in
//     memory, no double-sign state at all: the protocol's and the client's
//     cost and nothing else.
//   - memState: signerkit's privval endpoint and guard (tm2-tmkms), the key
//     in process, the guard's state in memory (guard.MemFS): everything the
//     daemon does but the durable state write.
//
// Each serves a /metrics page with the backend's sign time (and, for
// memState, the request time), in the daemon's metric names.
const (
	floorGno = "floor: gno's server, no state"
	memState = "in process, state in memory"

	floorEnv      = "SK_SCENARIO_FLOOR" // the mode; set only in the child
	floorSeedEnv  = "SK_SCENARIO_FLOOR_SEED"
	floorSockEnv  = "SK_SCENARIO_FLOOR_SOCK"
	floorChainEnv = "SK_SCENARIO_FLOOR_CHAIN"
)

func isFloor(kind string) bool { return kind == floorGno || kind == memState }

func TestMain(m *testing.M) {
	if mode := os.Getenv(floorEnv); mode != "" {
		if err := runFloor(mode); err != nil {
			fmt.Fprintln(os.Stderr, "floor signer:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// floorEnvOf is the environment that makes this test binary the floor
// signer of v.
func floorEnvOf(v *validator) []string {
	mode := "gno"
	if v.kind == memState {
		mode = "memstate"
	}
	return []string{floorEnv + "=" + mode, floorSeedEnv + "=" + hex.EncodeToString(v.seed),
		floorSockEnv + "=" + v.sock, floorChainEnv + "=" + chainID}
}

// floorStats are the floor signer's histograms' sums and counts, by metric
// and phase.
type floorStats struct {
	mu  sync.Mutex
	sum map[string][2]float64 // "metric\x00phase"
}

func (s *floorStats) add(metric, phase string, d time.Duration) {
	s.mu.Lock()
	k := metric + "\x00" + phase
	v := s.sum[k]
	s.sum[k] = [2]float64{v[0] + d.Seconds(), v[1] + 1}
	s.mu.Unlock()
}

func (s *floorStats) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]string, 0, len(s.sum))
	for k := range s.sum {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		metric, phase, _ := strings.Cut(k, "\x00")
		fmt.Fprintf(w, "%s_sum{phase=%q} %g\n%s_count{phase=%q} %g\n", metric, phase, s.sum[k][0], metric, phase, s.sum[k][1])
	}
}

func runFloor(mode string) error {
	seed, err := hex.DecodeString(os.Getenv(floorSeedEnv))
	if err != nil || len(seed) != ed25519.SeedSize {
		return fmt.Errorf("%s: want a %d-byte hex seed", floorSeedEnv, ed25519.SeedSize)
	}
	stats := &floorStats{sum: map[string][2]float64{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() { _ = http.Serve(ln, stats) }()
	fmt.Printf("msg=metrics url=http://%s/metrics\n", ln.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	sock := os.Getenv(floorSockEnv)
	switch mode {
	case "gno":
		key := &floorKey{priv: ed25519.NewKeyFromSeed(seed), stats: stats}
		srv, err := rsserver.NewRemoteSignerServer(key, "unix://"+sock, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			return err
		}
		if err := srv.Start(); err != nil {
			return err
		}
		<-ctx.Done()
		return srv.Stop()
	case "memstate":
		return runMemState(ctx, seed, sock, stats)
	}
	return fmt.Errorf("%s=%q: want gno or memstate", floorEnv, mode)
}

// floorKey is gno's types.Signer over a key in memory, timing each sign.
type floorKey struct {
	priv  ed25519.PrivateKey
	stats *floorStats
}

func (k *floorKey) PubKey() gnocrypto.PubKey {
	var pk gnoed25519.PubKeyEd25519
	copy(pk[:], k.priv.Public().(ed25519.PublicKey))
	return pk
}

func (k *floorKey) Sign(b []byte) ([]byte, error) {
	start := time.Now()
	sig := ed25519.Sign(k.priv, b)
	d := time.Since(start)
	phase := "sign"
	if m, err := signbytes.ParseTM2(b); err == nil {
		phase = m.Phase.String()
	}
	k.stats.add("signerkit_backend_sign_duration_seconds", phase, d)
	return sig, nil
}

func (k *floorKey) Close() error { return nil }

// timedKey times the in-process key's signs by the privval label.
type timedKey struct {
	signer.Signer
	stats *floorStats
}

func (k timedKey) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	start := time.Now()
	sig, err := k.Signer.SignContext(ctx, msg)
	k.stats.add("signerkit_backend_sign_duration_seconds", signertrace.LabelFrom(ctx), time.Since(start))
	return sig, err
}

func runMemState(ctx context.Context, seed []byte, sock string, stats *floorStats) error {
	key, err := inprocess.FromSeed(seed, signer.Ed25519)
	if err != nil {
		return err
	}
	g, err := guard.New(timedKey{key, stats}, guard.Config{FS: &guard.MemFS{}, AutoInit: true})
	if err != nil {
		return err
	}
	defer g.Close()
	e, err := privval.NewEndpoint(g, privval.Config{Dialect: privval.GnoTMKMS, Network: "unix", Address: sock,
		ChainID: os.Getenv(floorChainEnv), MaxBackoff: 200 * time.Millisecond,
		OnRequest: func(i privval.RequestInfo) { stats.add("signerkit_request_duration_seconds", i.Label, i.Duration) }})
	if err != nil {
		return err
	}
	err = e.Run(ctx)
	if ctx.Err() != nil {
		return nil
	}
	return err
}
