package threshold_test

import (
	"crypto/rand"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signerkit/signerkit/threshold/frost"
	"github.com/signerkit/signerkit/threshold/thresholdtest"
)

// slowRand is crypto/rand, made slower per read once slow is set: a
// nonce store reading it then takes that long per nonce pair, so a party
// answers a presign batch in time proportional to its size.
type slowRand struct{ slow *atomic.Int64 }

func (r slowRand) Read(p []byte) (int, error) {
	time.Sleep(time.Duration(r.slow.Load()))
	return rand.Read(p)
}

// TestSlowPresignConverges: a party that takes longer to make a batch than
// the coordinator's PartyTimeout (a loaded machine, the race detector)
// once never filled the coordinator's pool: each presign timed out, the
// party kept the pairs it had made (their commitments never reached the
// coordinator, which asked only for new ones), every retry asked for the
// same batch again, and the orphans filled the party's store until presign
// failed for an hour (ReclaimAfter). The coordinator now asks for the
// outstanding pairs after a failure and shrinks its batch after a timeout.
func TestSlowPresignConverges(t *testing.T) {
	const (
		pool     = 256
		capacity = 4 * pool
		perPair  = 10 * time.Millisecond // a refill of half the pool takes > 1 s
		timeout  = time.Second
	)
	var slow atomic.Int64
	c := startCluster(t, thresholdtest.Options{NonceCapacity: capacity, ReclaimAfter: -1,
		NonceRand: func(frost.Identifier) io.Reader { return slowRand{&slow} }})
	cfg := c.Config
	cfg.PoolSize = pool
	cfg.PartyTimeout = timeout
	s := newSigner(t, cfg)
	ids := []frost.Identifier{1, 2, 3}
	waitFull := func(what string) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for {
			full := true
			for _, id := range ids {
				full = full && stats(s, id).Pool >= pool
			}
			if full {
				return
			}
			if time.Now().After(deadline) {
				for _, id := range ids {
					t.Errorf("party %d: pool %d of %d, store %+v", id, stats(s, id).Pool, pool, c.Party(id).NonceStats())
				}
				t.Fatalf("the pools did not fill %s", what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFull("at start")
	// The parties slow down; signs take every pool below half, so each
	// party is asked for a refill it cannot make within the timeout.
	slow.Store(int64(perPair))
	for i := 0; ; i++ {
		low := true
		for _, id := range ids {
			low = low && stats(s, id).Pool < pool/2
		}
		if low {
			break
		}
		mustSign(t, s, []byte{1, byte(i), byte(i >> 8)})
	}
	waitFull("with slow parties")
	for _, id := range ids {
		// The pool, and at most the batches of requests whose answers
		// came after the retry that ended the time-outs.
		if st := c.Party(id).NonceStats(); st.Fresh > 2*pool {
			t.Errorf("party %d holds %d fresh pairs with a pool of %d: orphans pile up (%+v)", id, st.Fresh, pool, st)
		}
	}
	// Every commitment in the pools is usable, and used once: no sign
	// meets a pair already used.
	for i := range pool {
		mustSign(t, s, []byte{2, byte(i), byte(i >> 8)})
	}
	for _, id := range ids {
		if st := stats(s, id); st.Failures != 0 {
			t.Errorf("party %d: %d failed sign requests: %+v", id, st.Failures, st)
		}
	}
}
