package etcdstore_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/guard/etcdstore"
	"github.com/signerkit/signerkit/guard/etcdstore/etcdtest"
	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer/signertest"
)

const chain = "test-chain"

var baseTime = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// vote returns the sign bytes of a vote or proposal for block tag (0: nil).
func vote(t testing.TB, ph signbytes.Phase, h, r int64, tag byte) []byte {
	t.Helper()
	m := signbytes.Message{Format: signbytes.CometBFT, Phase: ph, Height: h, Round: r, Timestamp: baseTime, ChainID: chain}
	if tag != 0 {
		m.BlockID = signbytes.BlockID{Hash: bytes.Repeat([]byte{tag}, 32), PartSetHeader: signbytes.PartSetHeader{Total: 1, Hash: bytes.Repeat([]byte{tag}, 32)}}
	}
	if ph == signbytes.Proposal {
		m.POLRound = -1
	}
	b, err := m.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func newStore(t testing.TB, c *etcdtest.Cluster, prefix string, endpoints ...string) *etcdstore.Store {
	t.Helper()
	if endpoints == nil {
		endpoints = c.Endpoints()
	}
	tlsCfg, err := etcdstore.TLSFiles(c.PKI.CA, c.PKI.ClientCert, c.PKI.ClientKey)
	if err != nil {
		t.Fatal(err)
	}
	s, err := etcdstore.New(etcdstore.Config{Endpoints: endpoints, Prefix: prefix, TLS: tlsCfg, AttemptTimeout: 400 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestEtcdStore checks Load and Swap on a real 3-member cluster: no state,
// a create, a conflict that returns what is there, and a client whose
// certificate the members do not trust.
func TestEtcdStore(t *testing.T) {
	c := etcdtest.Start(t, 3)
	ctx := context.Background()
	s := newStore(t, c, "/t/basic")
	if _, _, err := s.Load(ctx, chain); !errors.Is(err, guard.ErrNoState) {
		t.Fatalf("Load of nothing: %v", err)
	}
	st := guard.State{ChainID: chain, Height: 7}
	v1, err := s.Swap(ctx, chain, 0, st)
	if err != nil || v1 == 0 {
		t.Fatalf("create: %d, %v", v1, err)
	}
	b := vote(t, signbytes.Prevote, 7, 0, 1)
	key := signertest.NewFake(1)
	sig, _ := key.SignContext(ctx, b)
	st2 := guard.State{ChainID: chain, Height: 7, Step: 2, SignBytes: b, Signature: sig}
	if _, err := s.Swap(ctx, chain, 0, st2); !errors.As(err, new(*guard.ConflictError)) {
		t.Fatalf("create again: %v, want a conflict", err)
	}
	v2, err := s.Swap(ctx, chain, v1, st2)
	if err != nil || v2 <= v1 {
		t.Fatalf("swap: %d, %v", v2, err)
	}
	var ce *guard.ConflictError
	if _, err := s.Swap(ctx, chain, v1, st); !errors.As(err, &ce) || ce.Version != v2 || !bytes.Equal(ce.Current.Signature, sig) {
		t.Fatalf("stale swap: %v (%+v)", err, ce)
	}
	got, v, err := s.Load(ctx, chain)
	if err != nil || v != v2 || !bytes.Equal(got.SignBytes, b) || got.Step != 2 {
		t.Fatalf("Load: %+v, %d, %v", got, v, err)
	}

	other, err := etcdstore.TLSFiles(c.PKI.CA, c.PKI.OtherCert, c.PKI.OtherKey)
	if err != nil {
		t.Fatal(err)
	}
	bad, _ := etcdstore.New(etcdstore.Config{Endpoints: c.Endpoints(), Prefix: "/t/basic", TLS: other})
	tctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if _, _, err := bad.Load(tctx, chain); !errors.As(err, new(*etcdstore.UnavailableError)) {
		t.Fatalf("an untrusted client certificate: %v", err)
	}
}

// TestActiveActive runs three Guards, each with its own Store and its own
// copy of the key, on one state in etcd; two validator sides ask each
// Guard, at once, for votes on different blocks at every height, round and
// step. Exactly one message is signed per height/round/step, every
// signature verifies, and every step gets signed.
func TestActiveActive(t *testing.T) {
	c := etcdtest.Start(t, 3)
	ctx := context.Background()
	var gs []*guard.Guard
	for i := range 3 {
		g, err := guard.New(signertest.NewFake(9), guard.Config{Store: newStore(t, c, "/t/aa")})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close() })
		if i == 0 {
			if err := g.Init(ctx, chain, 1); err != nil {
				t.Fatal(err)
			}
		}
		gs = append(gs, g)
	}
	pub := gs[0].Public().(ed25519.PublicKey)
	var mu sync.Mutex
	signed := map[string][]byte{}
	heights := int64(20)
	if testing.Short() {
		heights = 5
	}
	for h := int64(1); h <= heights; h++ {
		for _, ph := range []signbytes.Phase{signbytes.Proposal, signbytes.Prevote, signbytes.Precommit} {
			var wg sync.WaitGroup
			for side := range 2 {
				for i, g := range gs {
					wg.Add(1)
					go func() {
						defer wg.Done()
						b := vote(t, ph, h, 0, byte(1+side))
						s, err := g.SignBytes(ctx, b)
						if err != nil {
							if !errors.Is(err, guard.ErrNoState) && !errors.As(err, new(*guard.DoubleSignError)) {
								t.Errorf("guard %d side %d at %d/%v: %v", i, side, h, ph, err)
							}
							return
						}
						if !ed25519.Verify(pub, s.SignBytes, s.Signature) {
							t.Errorf("a signature that does not verify")
						}
						mu.Lock()
						defer mu.Unlock()
						k := fmt.Sprintf("%d/0/%d", h, ph.Step())
						if old, ok := signed[k]; ok && !bytes.Equal(old, s.SignBytes) {
							t.Errorf("CONFLICT: two different messages signed at %s", k)
						}
						signed[k] = s.SignBytes
					}()
				}
			}
			wg.Wait()
		}
	}
	if want := int(heights) * 3; len(signed) != want {
		t.Errorf("%d steps signed, want %d", len(signed), want)
	}
}

// TestFailClosed: with two of three members down (no quorum) a sign is
// refused within its deadline with a *guard.StoreError; once a member
// comes back, signing resumes by itself (within 10 s of a leader: a bound
// for liveness on a busy machine; the checker in make ha holds it to 2 s).
func TestFailClosed(t *testing.T) {
	c := etcdtest.Start(t, 3)
	ctx := context.Background()
	g, err := guard.New(signertest.NewFake(5), guard.Config{Store: newStore(t, c, "/t/fc"), AutoInit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, err := g.SignBytes(ctx, vote(t, signbytes.Prevote, 1, 0, 1)); err != nil {
		t.Fatal(err)
	}
	c.Kill(1)
	c.Kill(2)
	sctx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	start := time.Now()
	_, err = g.SignBytes(sctx, vote(t, signbytes.Precommit, 1, 0, 1))
	cancel()
	if !errors.As(err, new(*guard.StoreError)) {
		t.Fatalf("without quorum: %v, want a *guard.StoreError", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the refusal took %v, past its 1.5 s deadline by far", d)
	}
	c.Restart(1)
	c.WaitLeader(30 * time.Second)
	back := time.Now()
	deadline := back.Add(10 * time.Second)
	for {
		sctx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := g.SignBytes(sctx, vote(t, signbytes.Precommit, 1, 0, 1))
		cancel()
		if err == nil {
			t.Logf("signing resumed %v after a leader was back", time.Since(back).Round(time.Millisecond))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no sign within 10 s of a quorum back: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
