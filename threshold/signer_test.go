package threshold_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
	"github.com/signerkit/signerkit/threshold"
	"github.com/signerkit/signerkit/threshold/frost"
	"github.com/signerkit/signerkit/threshold/thresholdtest"
)

func TestConformance(t *testing.T)      { conformance(t, false) }
func TestConformanceLocal(t *testing.T) { conformance(t, true) }

func conformance(t *testing.T, local bool) {
	t.Parallel() // a cluster of its own; the suite's time bounds are generous
	h := newHangSwitch()
	c := startCluster(t, thresholdtest.Options{Local: local, WrapListener: h.wrap})
	cfg := c.Config
	cfg.PartyTimeout = 2 * time.Second
	cfg.PoolSize = 32 // the suite opens a Signer per check
	// FROST signatures are valid Ed25519 signatures but not deterministic
	// ones: R comes from the signers' fresh nonces.
	signertest.Run(t, func() (signer.Signer, error) { return threshold.New(cfg) }, signertest.Options{
		Hang:       func() func() { return h.hangAll(1, 2, 3) },
		Timeout:    20 * time.Second,
		MaxMessage: threshold.MaxMessage,
		Randomized: true,
	})
}

func TestSplitSeedKeepsValidatorKey(t *testing.T) {
	seed := bytes.Repeat([]byte{7}, ed25519.SeedSize)
	c := startCluster(t, thresholdtest.Options{Seed: seed})
	s := newSigner(t, c.Config)
	want := ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
	if !bytes.Equal(s.Public().(ed25519.PublicKey), want) {
		t.Fatalf("group key %x, want the seed's %x", s.Public(), want)
	}
	mustSign(t, s, []byte("imported key"))
}

func TestDKGCluster(t *testing.T) {
	c := startCluster(t, thresholdtest.Options{DKG: true})
	s := newSigner(t, c.Config)
	for i := range 20 {
		mustSign(t, s, []byte(fmt.Sprintf("dkg key message %d", i)))
	}
}

// TestPartyDown: with one party stopped, every sign succeeds on the other
// two; after it restarts it is used again.
func TestPartyDown(t *testing.T) {
	for _, down := range []frost.Identifier{1, 2, 3} {
		t.Run(fmt.Sprint(down), func(t *testing.T) {
			c := startCluster(t, thresholdtest.Options{})
			s := newSigner(t, c.Config)
			mustSign(t, s, []byte("all up"))
			c.Stop(down)
			for i := range 15 {
				mustSign(t, s, []byte(fmt.Sprintf("party %d down, sign %d", down, i)))
			}
			for _, p := range s.Stats() {
				if p.ID != down && p.Failures != 0 {
					t.Errorf("party %d, which is up, had %d failures", p.ID, p.Failures)
				}
			}
		})
	}
}

// TestPartyKilledMidRun stops a party while signs are in flight: each
// sign still succeeds within its deadline.
func TestPartyKilledMidRun(t *testing.T) {
	c := startCluster(t, thresholdtest.Options{})
	cfg := c.Config
	cfg.PartyTimeout = time.Second
	s := newSigner(t, cfg)
	var wg sync.WaitGroup
	errs := make(chan error, 400)
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				msg := []byte(fmt.Sprintf("g%d i%d", g, i))
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				sig, err := s.SignContext(ctx, msg)
				cancel()
				if err == nil && !ed25519.Verify(s.Public().(ed25519.PublicKey), msg, sig) {
					err = errors.New("signature does not verify")
				}
				if err != nil {
					errs <- err
				}
				if g == 0 && i == 10 {
					c.Stop(2)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("sign: %v", err)
	}
}

// TestHungPartyRoutedAround: a party that accepts requests and never
// answers is hedged around.
func TestHungPartyRoutedAround(t *testing.T) {
	h := newHangSwitch()
	c := startCluster(t, thresholdtest.Options{WrapListener: h.wrap})
	s := newSigner(t, c.Config)
	mustSign(t, s, []byte("warm up"))
	release := h.hangAll(1)
	defer release()
	for i := range 10 {
		mustSign(t, s, []byte(fmt.Sprintf("party 1 hung %d", i)))
	}
	if got := stats(s, 2).Shares + stats(s, 3).Shares; got < 20 {
		t.Errorf("parties 2 and 3 gave %d shares, want at least 20", got)
	}
}

func TestDeadlineWhenTooFewParties(t *testing.T) {
	t.Parallel() // waits out a deadline
	c := startCluster(t, thresholdtest.Options{})
	s := newSigner(t, c.Config)
	mustSign(t, s, []byte("up"))
	c.Stop(1)
	c.Stop(2)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err := s.SignContext(ctx, []byte("only one left"))
	if err == nil {
		t.Fatal("signed with one party of a 2-of-3 key")
	}
	if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, signer.ErrDeviceNotFound) && !errors.Is(err, signer.ErrDisconnected) {
		t.Fatalf("got %v, want a deadline, disconnection or not-found error", err)
	}
}

// TestMaliciousParty: a party whose share is corrupt (it signs with a
// wrong secret) is identified, its shares are never aggregated into a
// returned signature, and signing goes on with the other two.
func TestMaliciousParty(t *testing.T) {
	c := startCluster(t, thresholdtest.Options{})
	// Party 2 is replaced by one holding a wrong secret for id 2.
	c.Stop(2)
	kb, _ := c.Keys[1].MarshalBinary()
	other, _ := c.Keys[2].MarshalBinary()
	copy(kb[4:36], other[4:36]) // party 3's secret under id 2
	bad, err := frost.ParseKeyPackage(kb)
	if err != nil {
		t.Fatal(err)
	}
	c.Keys[1] = bad
	if err := c.Restart(2); err != nil {
		t.Fatal(err)
	}
	cfg := c.Config
	cfg.HedgeAfter = -1
	var log logBuffer
	cfg.Log = slog.New(slog.NewTextHandler(&log, nil))
	s := newSigner(t, cfg)
	// Sign until party 2 has been asked (a party not yet measured is
	// tried early); every signature returned verifies.
	for i := 0; i < 500 && stats(s, 2).BadShares == 0; i++ {
		mustSign(t, s, []byte(fmt.Sprintf("with a cheater %d", i)))
	}
	st := stats(s, 2)
	if st.BadShares == 0 {
		t.Fatalf("party 2 was asked %d times and never identified: %+v", st.Shares, st)
	}
	// Once identified, it is avoided: the next signs do not ask it.
	for i := range 10 {
		mustSign(t, s, []byte(fmt.Sprintf("after the cheater was caught %d", i)))
	}
	if got := stats(s, 2).BadShares; got != st.BadShares {
		t.Errorf("party 2 was asked again after it was caught: %d bad shares, was %d", got, st.BadShares)
	}
	// The log names the cheater, and no other party.
	if l := log.String(); !strings.Contains(l, `msg="threshold: a party sent a signature share that does not verify; avoided for a minute" party=2 `) ||
		strings.Contains(l, "party=1") || strings.Contains(l, "party=3") {
		t.Errorf("the coordinator's log:\n%s", l)
	}
}

// logBuffer collects a logger's output from several goroutines.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestGuardedParties(t *testing.T) {
	var log logBuffer
	c := startCluster(t, thresholdtest.Options{Guard: func(id frost.Identifier) *guard.Config {
		return &guard.Config{FS: &guard.MemFS{}, AutoInit: true}
	}, Log: slog.New(slog.NewTextHandler(&log, nil))})
	s := newSigner(t, c.Config)
	vote := func(h int64, block byte) []byte {
		m := signbytes.Message{Format: signbytes.CometBFT, Phase: signbytes.Prevote, Height: h, Round: 0,
			Timestamp: time.Unix(1700000000, 0).UTC(), ChainID: "test-chain",
			BlockID: signbytes.BlockID{Hash: bytes.Repeat([]byte{block}, 32), PartSetHeader: signbytes.PartSetHeader{Total: 1, Hash: bytes.Repeat([]byte{block}, 32)}}}
		b, err := m.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	mustSign(t, s, vote(5, 1))
	mustSign(t, s, vote(5, 1)) // the same vote again: allowed
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := s.SignContext(ctx, vote(5, 2)); !errors.Is(err, signer.ErrDoubleSign) {
		t.Fatalf("conflicting vote: %v, want ErrDoubleSign", err)
	}
	if _, err := s.SignContext(ctx, vote(4, 1)); !errors.Is(err, signer.ErrDoubleSign) {
		t.Fatalf("lower height: %v, want ErrDoubleSign", err)
	}
	if _, err := s.SignContext(ctx, []byte("not a vote")); err == nil {
		t.Fatal("a guarded party signed bytes that are not a vote")
	}
	mustSign(t, s, vote(6, 1))
	// Each party that refused logged it, with the guard's reason.
	if l := log.String(); !strings.Contains(l, `level=WARN msg="sign request refused" party=`) || !strings.Contains(l, "conflicting data at the same height/round/step") {
		t.Errorf("the parties' log:\n%s", l)
	}
}

// TestBytesPerSign measures the online payload and wire bytes per party
// per signature on the sign connections, and holds them to the issue's
// goals for a 32-byte message: payload ≤ 200 B, wire ≤ 2 × payload.
func TestBytesPerSign(t *testing.T) {
	for _, local := range []bool{false, true} {
		t.Run(fmt.Sprintf("local=%v", local), func(t *testing.T) {
			c := startCluster(t, thresholdtest.Options{Local: local})
			s := newSigner(t, c.Config)
			msg := bytes.Repeat([]byte{'v'}, 32)
			// Warm up until every remote party has been used, so that no
			// TLS handshake falls in the measured window.
			for i := 0; i < 200; i++ {
				mustSign(t, s, msg)
				used := true
				for _, p := range s.Stats() {
					used = used && (p.Local || p.Shares > 0)
				}
				if used {
					break
				}
			}
			before := s.Stats()
			const n = 50
			for range n {
				mustSign(t, s, msg)
			}
			var payload, wire, shares uint64
			for i, p := range s.Stats() {
				if p.Local {
					continue
				}
				b := before[i]
				payload += p.Sign.PayloadOut - b.Sign.PayloadOut + p.Sign.PayloadIn - b.Sign.PayloadIn
				wire += p.Sign.WireOut - b.Sign.WireOut + p.Sign.WireIn - b.Sign.WireIn
				shares += p.Shares - b.Shares
			}
			if shares == 0 {
				t.Fatal("no remote shares")
			}
			pp, wp := float64(payload)/float64(shares), float64(wire)/float64(shares)
			t.Logf("per party per signature, 32-byte message: payload %.1f B, wire %.1f B (%.2f×)", pp, wp, wp/pp)
			if pp > 200 {
				t.Errorf("payload %.1f B per party per signature, goal ≤ 200", pp)
			}
			if wp > 2*pp {
				t.Errorf("wire %.1f B is more than twice the payload %.1f B", wp, pp)
			}
		})
	}
}

func TestTLSRefusesStrangers(t *testing.T) {
	t.Parallel() // waits out two deadlines
	c := startCluster(t, thresholdtest.Options{})
	other := startCluster(t, thresholdtest.Options{})
	// A coordinator with a certificate from another CA.
	cfg := c.Config
	cfg.TLS = &tls.Config{Certificates: other.Config.TLS.Certificates, RootCAs: c.CAPool()}
	s := newSigner(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if _, err := s.SignContext(ctx, []byte("m")); err == nil {
		t.Fatal("a coordinator with a foreign certificate got a signature")
	}
	// A coordinator that trusts another CA refuses the parties.
	cfg = c.Config
	cfg.TLS = &tls.Config{Certificates: c.Config.TLS.Certificates, RootCAs: other.CAPool()}
	s2 := newSigner(t, cfg)
	ctx2, cancel2 := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel2()
	if _, err := s2.SignContext(ctx2, []byte("m")); err == nil {
		t.Fatal("a coordinator signed with parties whose certificates it does not trust")
	}
}

// TestPartyRestartKeepsNonces: a party restarted on the same nonce file
// honours the commitments the coordinator already holds and refuses used
// ones.
func TestPartyRestartKeepsNonces(t *testing.T) {
	fss := map[frost.Identifier]guard.FS{}
	for id := frost.Identifier(1); id <= 3; id++ {
		fss[id] = guard.DirFS(t.TempDir())
	}
	c := startCluster(t, thresholdtest.Options{NonceFS: func(id frost.Identifier) guard.FS { return fss[id] }})
	cfg := c.Config
	cfg.HedgeAfter = -1
	s := newSigner(t, cfg)
	mustSign(t, s, []byte("before"))
	c.Stop(1)
	c.Stop(3)
	if err := c.Restart(1); err != nil {
		t.Fatal(err)
	}
	if err := c.Restart(3); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		mustSign(t, s, []byte(fmt.Sprintf("after restart %d", i)))
	}
}
