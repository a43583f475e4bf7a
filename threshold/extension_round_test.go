package threshold_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"net"
	"testing"
	"time"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/threshold/frost"
	"github.com/signerkit/signerkit/threshold/thresholdtest"
)

// holdListener wraps a party's listener: while h is on for the party,
// its connections hold every write (the party's answers), as a link
// whose return path is slow would.
type holdListener struct {
	net.Listener
	id frost.Identifier
	h  *hangSwitch
}

func (l *holdListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &holdConn{Conn: c, id: l.id, h: l.h}, nil
}

type holdConn struct {
	net.Conn
	id frost.Identifier
	h  *hangSwitch
}

func (c *holdConn) Write(p []byte) (int, error) {
	c.h.wait(c.id)
	return c.Conn.Write(p)
}

// TestPrecommitAndExtensionOneRound: behind a coordinator's guard, a
// CometBFT v0.38 precommit for a block and its vote extension cost one
// round trip to the parties, not two: with every party's answers held
// back, the parties are asked for, and make, the shares of both before
// the coordinator has any answer. A sequential sign would stop at the
// precommit's two shares. Both go to the same pair of parties. Both
// signatures verify with crypto/ed25519.
func TestPrecommitAndExtensionOneRound(t *testing.T) {
	h := newHangSwitch()
	opts := thresholdtest.Options{
		WrapListener: func(id frost.Identifier, l net.Listener) net.Listener {
			return &holdListener{Listener: l, id: id, h: h}
		},
		// The parties' guards: each admits the extension at or after its
		// last vote, whether or not its precommit share came first.
		Guard: func(frost.Identifier) *guard.Config {
			return &guard.Config{Dir: t.TempDir(), AutoInit: true, ChainIDs: []string{"c1"}}
		},
	}
	c := startCluster(t, opts)
	cfg := c.Config
	cfg.HedgeAfter = -1 // one attempt per sign: the count below is exact
	cfg.PartyTimeout = 30 * time.Second
	cfg.PoolSize = 8
	s := newSigner(t, cfg)
	g, err := guard.New(s, guard.Config{Dir: t.TempDir(), AutoInit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pub := s.Public().(ed25519.PublicKey)
	bid := signbytes.BlockID{Hash: bytes.Repeat([]byte{7}, 32), PartSetHeader: signbytes.PartSetHeader{Total: 1, Hash: make([]byte, 32)}}
	// A sign connection is made at a party's first sign, and its TLS
	// handshake needs the party's writes, which the check below holds:
	// whole heights are signed first until every party's is up.
	height := int64(0)
	for start := time.Now(); ; {
		up := true
		for id := frost.Identifier(1); id <= 3; id++ {
			up = up && stats(s, id).Sign.WireIn > 0
		}
		if up {
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("the sign connections did not all come up: %+v", s.Stats())
		}
		height++
		for _, ph := range []signbytes.Phase{signbytes.Prevote, signbytes.Precommit} {
			if _, err := g.SignConsensus(ctx, signbytes.Message{Format: signbytes.CometBFT, Phase: ph, Height: height, ChainID: "c1"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for range 3 {
		height++
		pv := signbytes.Message{Format: signbytes.CometBFT, Phase: signbytes.Prevote, Height: height, ChainID: "c1", BlockID: bid}
		if _, err := g.SignConsensus(ctx, pv); err != nil { // connects, fills the pools
			t.Fatal(err)
		}
		shares := func() (n uint64) {
			for id := frost.Identifier(1); id <= 3; id++ {
				n += c.Party(id).ServeStats().Shares
			}
			return n
		}
		before := shares()
		each := map[frost.Identifier]uint64{}
		for id := frost.Identifier(1); id <= 3; id++ {
			each[id] = c.Party(id).ServeStats().Shares
		}
		// Held answers hold presign refills too: a pool short of a pair
		// would make the extension wait for one, so start with them full
		// (a liveness bound only).
		for start := time.Now(); ; time.Sleep(time.Millisecond) {
			full := true
			for id := frost.Identifier(1); id <= 3; id++ {
				full = full && stats(s, id).Pool >= 2 // the precommit's and the extension's
			}
			if full {
				break
			}
			if time.Since(start) > 10*time.Second {
				t.Fatalf("height %d: the pools did not fill: %+v", height, s.Stats())
			}
		}
		release := h.hangAll(1, 2, 3)
		pc := signbytes.Message{Format: signbytes.CometBFT, Phase: signbytes.Precommit, Height: height, ChainID: "c1", BlockID: bid}
		ext := signbytes.Message{Format: signbytes.CometBFT, Phase: signbytes.VoteExtension, Height: height, ChainID: "c1", Extension: []byte("ext")}
		type result struct {
			v, e guard.Signed
			err  error
		}
		done := make(chan result, 1)
		go func() {
			v, e, err := g.SignWithExtension(ctx, pc, ext)
			done <- result{v, e, err}
		}()
		// A liveness bound, not a timing: both requests' shares are made
		// with no answer let through.
		for start := time.Now(); shares()-before < 4; time.Sleep(time.Millisecond) {
			if time.Since(start) > 10*time.Second {
				release()
				var got []uint64
				for id := frost.Identifier(1); id <= 3; id++ {
					got = append(got, c.Party(id).ServeStats().Shares-each[id])
				}
				t.Fatalf("height %d: %d shares made before any answer (by party: %v), want 4 (the precommit's and the extension's, one round); coordinator: %+v",
					height, shares()-before, got, s.Stats())
			}
		}
		release()
		r := <-done
		if r.err != nil {
			t.Fatal(r.err)
		}
		for _, m := range []struct {
			m signbytes.Message
			s guard.Signed
		}{{pc, r.v}, {ext, r.e}} {
			b, err := m.m.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			if !ed25519.Verify(pub, b, m.s.Signature) {
				t.Fatalf("height %d: the %v's signature does not verify with crypto/ed25519", height, m.m.Phase)
			}
		}
		if n := shares() - before; n != 4 {
			t.Fatalf("height %d: %d shares for a precommit and its extension, want 4", height, n)
		}
		// Both went to the same pair: the fastest, chosen at once.
		for id := frost.Identifier(1); id <= 3; id++ {
			if d := c.Party(id).ServeStats().Shares - each[id]; d != 0 && d != 2 {
				t.Fatalf("height %d: party %d made %d shares, want the pair to make both", height, id, d)
			}
		}
	}
}
