package privval

import (
	"bytes"
	"sync"
	"testing"
	"time"
)

// TestSentries: three validator connections (sentries), each served by its
// own Endpoint over one guard, send the same height/round/step at once.
// Every one gets the identical signature, from one backend sign per
// height/round/step, with no errors.
func TestSentries(t *testing.T) {
	const sentries, heights = 3, 300
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
			verify(t, k.pub(), voteSignBytes(t, v, chainID, V038.format()), sigs[0])
			for i := 1; i < sentries; i++ {
				if !bytes.Equal(sigs[i], sigs[0]) {
					t.Fatalf("h=%d: sentry %d got another signature", h, i)
				}
			}
		}
	}
	// One sign per height/round/step, plus one per precommit extension
	// (which every sentry's request signs again, as FilePV does).
	gs := g.Stats()
	if gs.Refused != 0 || gs.Signs != uint64(2*heights+sentries*heights) || gs.Syncs != uint64(2*heights) ||
		gs.Cached != uint64((sentries-1)*2*heights) {
		t.Fatalf("guard stats %+v", gs)
	}
}
