package threshold_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/threshold"
	"github.com/signerkit/signerkit/threshold/frost"
	"github.com/signerkit/signerkit/threshold/thresholdtest"
)

func prevote(t *testing.T, h int64, block byte) []byte {
	t.Helper()
	m := signbytes.Message{Format: signbytes.CometBFT, Phase: signbytes.Prevote, Height: h, Round: 0,
		Timestamp: time.Unix(1700000000, 0).UTC(), ChainID: "test-chain",
		BlockID: signbytes.BlockID{Hash: bytes.Repeat([]byte{block}, 32), PartSetHeader: signbytes.PartSetHeader{Total: 1, Hash: bytes.Repeat([]byte{block}, 32)}}}
	b, err := m.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRefusalsDoNotExhaustNonces: a party's guard refuses a conflicting
// vote before it touches the nonce, so the pair stays fresh; the
// coordinator had popped its commitment and forgot it, and the slot was
// never freed. Enough refusals filled the nonce store, after which presign
// answered nothing and every sign waited until its deadline. The
// coordinator now releases the commitments it drops.
func TestRefusalsDoNotExhaustNonces(t *testing.T) {
	const capacity = 16
	c := startCluster(t, thresholdtest.Options{NonceCapacity: capacity, ReclaimAfter: -1,
		Guard: func(frost.Identifier) *guard.Config { return &guard.Config{FS: &guard.MemFS{}, AutoInit: true} }})
	cfg := c.Config
	cfg.PoolSize = 4
	s := newSigner(t, cfg)
	mustSign(t, s, prevote(t, 5, 1))
	for i := range 3 * capacity {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := s.SignContext(ctx, prevote(t, 5, 2))
		cancel()
		if !errors.Is(err, signer.ErrDoubleSign) {
			t.Fatalf("conflicting vote %d: %v, want ErrDoubleSign", i, err)
		}
	}
	mustSign(t, s, prevote(t, 6, 1))
	// A dropped commitment is released once the attempt's last request
	// ends, which may be after the sign returned: wait for it (a bound for
	// liveness only).
	deadline := time.Now().Add(10 * time.Second)
	for stats(s, 1).Released+stats(s, 2).Released+stats(s, 3).Released == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no nonce pair was released")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestCoordinatorChurnReleasesPools: each coordinator that closes releases
// the pairs of its pool, so the parties' stores do not fill as
// coordinators come and go (with outstanding pairs not asked for, as by a
// coordinator of another process).
func TestCoordinatorChurnReleasesPools(t *testing.T) {
	const capacity = 32
	c := startCluster(t, thresholdtest.Options{NonceCapacity: capacity, ReclaimAfter: -1})
	for i := range 3 * capacity / 8 {
		cfg := c.Config
		cfg.PoolSize = 8
		s := newSigner(t, cfg)
		for _, id := range []frost.Identifier{2, 3} {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_, err := s.Presign(ctx, id, 8)
			cancel()
			if err != nil {
				t.Fatalf("coordinator %d, party %d: %v", i, id, err)
			}
		}
		mustSign(t, s, []byte("churn"))
		s.Close()
	}
	for _, id := range []frost.Identifier{1, 2, 3} {
		if st := c.Party(id).NonceStats(); st.Fresh != 0 {
			t.Errorf("party %d holds %d fresh pairs after every coordinator closed: %+v", id, st.Fresh, st)
		}
	}
}

// TestFullStoreSaysSoAndReclaims: a presign to a party whose nonce store
// is full fails with the reason, instead of answering nothing; a party
// with ReclaimAfter reclaims pairs older than that (whose commitments were
// lost, say) and serves the presign.
func TestFullStoreSaysSoAndReclaims(t *testing.T) {
	const capacity = 8
	for _, reclaim := range []time.Duration{-1, time.Nanosecond} {
		c := startCluster(t, thresholdtest.Options{NonceCapacity: capacity, ReclaimAfter: reclaim})
		cfg := c.Config
		cfg.PoolSize = 1
		s := newSigner(t, cfg)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		// Fill party 2's store, as lost presign answers would.
		for c.Party(2).NonceStats().Free > 0 {
			if _, err := s.Presign(ctx, 2, capacity); err != nil {
				t.Fatal(err)
			}
		}
		n, err := s.Presign(ctx, 2, 1)
		if reclaim < 0 {
			if err == nil || !strings.Contains(err.Error(), "nonce store full") {
				t.Fatalf("presign to a full store: %d, %v; want the store-full error", n, err)
			}
			continue
		}
		if err != nil || n != 1 {
			t.Fatalf("presign with reclaim: %d, %v", n, err)
		}
		mustSign(t, s, []byte("after a reclaim"))
	}
}

// TestCloseRacesSign: SignContext once registered with a WaitGroup whose
// Wait in Close could run at zero at the same time (a misuse the race
// detector reports); signs started around Close either sign or fail with
// ErrClosed.
func TestCloseRacesSign(t *testing.T) {
	c := startCluster(t, thresholdtest.Options{})
	for range 10 {
		s, err := threshold.New(c.Config)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				sig, err := s.SignContext(ctx, []byte("m"))
				if err == nil && !ed25519.Verify(s.Public().(ed25519.PublicKey), []byte("m"), sig) {
					t.Error("invalid signature")
				}
				if err != nil && !errors.Is(err, signer.ErrClosed) {
					t.Errorf("sign during Close: %v", err)
				}
			}()
		}
		s.Close()
		wg.Wait()
	}
}

// TestOutstandingBeyondOneAnswerReleased: a coordinator that starts asks a
// party for its outstanding pairs, of which one answer carries at most
// 1024; the rest were once stranded (the store stayed full). The party now
// releases them.
func TestOutstandingBeyondOneAnswerReleased(t *testing.T) {
	const capacity = 1100
	c := startCluster(t, thresholdtest.Options{NonceCapacity: capacity, ReclaimAfter: -1})
	cfg := c.Config
	cfg.PoolSize = 1
	s1 := newSigner(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for c.Party(2).NonceStats().Free > 0 {
		if _, err := s1.Presign(ctx, 2, 1024); err != nil {
			t.Fatal(err)
		}
	}
	s2 := newSigner(t, cfg) // primes with the outstanding pairs
	for stats(s2, 2).Pool == 0 {
		if ctx.Err() != nil {
			t.Fatal(ctx.Err())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if st := c.Party(2).NonceStats(); st.Fresh != 1024 || st.Free != capacity-1024 {
		t.Fatalf("party 2 after a coordinator fetched its outstanding pairs: %+v, want %d fresh", st, 1024)
	}
	mustSign(t, s2, []byte("after the outstanding pairs"))
}

// readsRand is crypto/rand, delay slower per read, counting its reads.
type readsRand struct {
	delay time.Duration
	reads *atomic.Int64
}

func (r readsRand) Read(p []byte) (int, error) {
	r.reads.Add(1)
	time.Sleep(r.delay)
	return rand.Read(p)
}

// TestCloseReleasesPresignInFlight: a coordinator that closes while its
// refills are at the parties once dropped their answers, and the pairs
// the parties had made stayed fresh, known to no coordinator (the cause
// of TestCoordinatorChurnReleasesPools' failures when the last
// coordinator closed during a refill). Close now waits for an answer
// already asked for and releases its pairs.
func TestCloseReleasesPresignInFlight(t *testing.T) {
	reads := map[frost.Identifier]*atomic.Int64{1: {}, 2: {}, 3: {}}
	c := startCluster(t, thresholdtest.Options{NonceCapacity: 32, ReclaimAfter: -1,
		NonceRand: func(id frost.Identifier) io.Reader { return readsRand{20 * time.Millisecond, reads[id]} }})
	cfg := c.Config
	cfg.PoolSize = 8 // about 0.3 s to make at 20 ms a read
	s, err := threshold.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for id, n := range reads {
		for n.Load() == 0 { // the party is making the batch
			if time.Now().After(deadline) {
				t.Fatalf("party %d was never asked to presign", id)
			}
			time.Sleep(time.Millisecond)
		}
	}
	s.Close()
	for id := range reads {
		p := c.Party(id)
		p.Close() // waits for the requests it is serving; the store stays open
		if st := p.NonceStats(); st.Fresh != 0 {
			t.Errorf("party %d holds %d fresh pairs after the coordinator closed: %+v", id, st.Fresh, st)
		}
	}
}

// TestCloseReleasesShareInFlight: a share request that Close ends before
// it was sent (here, waiting for its connection) queues its pair for
// release; Close once released the queues without waiting for such
// requests (a hedge's loser outlives its sign), and the pair stayed
// fresh at the party. Close now waits for them.
func TestCloseReleasesShareInFlight(t *testing.T) {
	c := startCluster(t, thresholdtest.Options{NonceCapacity: 32, ReclaimAfter: -1})
	cfg := c.Config
	cfg.PoolSize = 8
	cfg.HedgeAfter = 50 * time.Millisecond
	var dials atomic.Int64
	slow := c.Config.Parties[0].Addr // party 1's
	if c.Config.Parties[0].ID != 1 {
		t.Fatal("the first party is not party 1")
	}
	cfg.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		// Party 1's presign connection opens; its sign connection
		// hangs until the dial's context ends, and fails 100 ms later.
		if addr == slow && dials.Add(1) > 1 {
			<-ctx.Done()
			time.Sleep(100 * time.Millisecond)
			return nil, ctx.Err()
		}
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	s := newSigner(t, cfg)
	deadline := time.Now().Add(30 * time.Second)
	for _, id := range []frost.Identifier{1, 2, 3} {
		for stats(s, id).Pool < cfg.PoolSize {
			if time.Now().After(deadline) {
				t.Fatalf("party %d's pool did not fill: %+v", id, stats(s, id))
			}
			time.Sleep(time.Millisecond)
		}
	}
	// The sign asks parties 1 and 2 (none measured: in order), waits on
	// party 1's connection, and a hedge signs with 2 and 3.
	mustSign(t, s, []byte("hedged"))
	s.Close()
	for _, id := range []frost.Identifier{1, 2, 3} {
		if st := c.Party(id).NonceStats(); st.Fresh != 0 {
			t.Errorf("party %d holds %d fresh pairs after the coordinator closed: %+v", id, st.Fresh, st)
		}
	}
}
