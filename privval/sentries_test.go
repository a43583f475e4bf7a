package privval

import (
	"bytes"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestSentries: three validator connections (sentries), each served by its
// own Endpoint over one guard, send the same height/round/step at once.
// Every one gets the identical signature, from one backend sign per
// height/round/step, with no errors. SIGNERKIT_SENTRY_HEIGHTS sets the
// number of heights (default 300; the goal is 10000).
func TestSentries(t *testing.T) {
	const sentries = 3
	heights := int64(300)
	if s := os.Getenv("SIGNERKIT_SENTRY_HEIGHTS"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 {
			t.Fatalf("SIGNERKIT_SENTRY_HEIGHTS=%q is not a positive number", s)
		}
		heights = n
	}
	k := newKey(5)
	g := newGuard(t, k, false)
	nodes := make([]*node, sentries)
	for i := range nodes {
		ln := listen(t, "unix")
		e, err := NewEndpoint(g, Config{Dialect: V038, Network: "unix", Address: ln.Addr().String(), ChainID: chainID})
		if err != nil {
			t.Fatal(err)
		}
		runEndpoint(t, e)
		nodes[i] = accept(t, ln, V038)
	}
	for h := int64(1); h <= heights; h++ {
		for _, typ := range []int32{typePrevote, typePrecommit} {
			v := testVote(typ, h, 0, 1)
			v.Timestamp = time.Unix(1700000000+h, 0).UTC()
			req := encSignVoteRequest(v, chainID, V038)
			sigs := make([][]byte, sentries)
			var wg sync.WaitGroup
			for i, n := range nodes {
				wg.Add(1)
				go func() {
					defer wg.Done()
					b, err := n.roundTrip(req)
					if err != nil {
						t.Error(err)
						return
					}
					r, err := decodeResponse(b, V038)
					if err != nil || r.err != nil || r.vote == nil {
						t.Errorf("h=%d sentry %d: %+v %v", h, i, r, err)
						return
					}
					sigs[i] = r.vote.Signature
				}()
			}
			wg.Wait()
			if t.Failed() {
				t.FailNow()
			}
			verify(t, k.PublicKey(), voteSignBytes(t, v, chainID, V038.format()), sigs[0])
			for i := 1; i < sentries; i++ {
				if !bytes.Equal(sigs[i], sigs[0]) {
					t.Fatalf("h=%d: sentry %d got another signature", h, i)
				}
			}
		}
	}
	// One backend sign per height/round/step and one per precommit
	// extension; the other sentries get both from the guard's cache.
	gs := g.Stats()
	if gs.Refused != 0 || gs.Signs != uint64(3*heights) || gs.Syncs != uint64(2*heights) ||
		gs.Cached != uint64((sentries-1)*3*heights) {
		t.Fatalf("guard stats %+v", gs)
	}
}
