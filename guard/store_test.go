package guard

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signbytes"
)

// memStore is a Store in memory: one version counter, like etcd's
// revision. failNext makes the next Swap fail after (lost false) or
// without writing.
type memStore struct {
	mu       sync.Mutex
	states   map[string]State
	vers     map[string]uint64
	rev      uint64
	failNext error
	written  bool // with failNext: write, then fail (outcome unknown)
	down     bool
	swaps    int
}

func newMemStore() *memStore {
	return &memStore{states: map[string]State{}, vers: map[string]uint64{}}
}

func (s *memStore) Name() string { return "mem://test" }

func (s *memStore) Load(ctx context.Context, chainID string) (State, uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return State{}, 0, errors.New("store down")
	}
	v, ok := s.vers[chainID]
	if !ok {
		return State{}, 0, ErrNoState
	}
	return cloneState(s.states[chainID]), v, nil
}

func (s *memStore) Swap(ctx context.Context, chainID string, prev uint64, next State) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.swaps++
	if s.down {
		return 0, errors.New("store down")
	}
	if s.vers[chainID] != prev {
		return 0, &ConflictError{ChainID: chainID, Current: cloneState(s.states[chainID]), Version: s.vers[chainID]}
	}
	fail, written := s.failNext, s.written
	s.failNext, s.written = nil, false
	if fail != nil && !written {
		return 0, fail
	}
	s.rev++
	s.states[chainID], s.vers[chainID] = cloneState(next), s.rev
	if fail != nil {
		return 0, fail
	}
	return s.rev, nil
}

func cloneState(st State) State {
	st.SignBytes, st.Signature = bytes.Clone(st.SignBytes), bytes.Clone(st.Signature)
	return st
}

// TestStoreSharedByGuards has three Guards over one Store, each asked for
// a different block at every height, round and step at once: exactly one
// signature per height/round/step is released, and the others either get
// it back (same bytes) or are refused.
func TestStoreSharedByGuards(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	key := newKey(7)
	pub := key.Public().(ed25519.PublicKey)
	var gs []*Guard
	for range 3 {
		g, err := New(newKey(7), Config{Store: st})
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		gs = append(gs, g)
	}
	if err := gs[0].Init(ctx, chainID, 1); err != nil {
		t.Fatal(err)
	}
	released := map[string][]byte{} // h/r/step → sign bytes
	var mu sync.Mutex
	for h := int64(1); h <= 30; h++ {
		for _, ph := range []signbytes.Phase{signbytes.Proposal, signbytes.Prevote, signbytes.Precommit} {
			var wg sync.WaitGroup
			for i, g := range gs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					b := msg(t, signbytes.CometBFT, chainID, ph, h, 0, byte(1+i%2), baseTime)
					s, err := g.SignBytes(ctx, b)
					if err != nil {
						if !errors.Is(err, ErrNoState) && !isRefusal(err) {
							t.Errorf("guard %d at %d/%v: %v", i, h, ph, err)
						}
						return
					}
					if !ed25519.Verify(pub, s.SignBytes, s.Signature) {
						t.Errorf("guard %d: a signature that does not verify", i)
					}
					mu.Lock()
					defer mu.Unlock()
					k := fmt.Sprintf("%d/%d", h, ph.Step())
					if old, ok := released[k]; ok && !bytes.Equal(old, s.SignBytes) {
						t.Errorf("two different messages signed at %s", k)
					}
					released[k] = s.SignBytes
				}()
			}
			wg.Wait()
		}
	}
	if len(released) != 90 {
		t.Errorf("%d steps signed, want 90 (each step has a winner)", len(released))
	}
}

func isRefusal(err error) bool {
	var d *DoubleSignError
	return errors.As(err, &d)
}

// TestStoreUnknownOutcome: a Swap that fails, written or not, releases
// nothing; the chain is not stuck, and the next request sees what the
// Store holds (the same bytes get the stored signature).
func TestStoreUnknownOutcome(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	g, err := New(newKey(3), Config{Store: st, AutoInit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.Init(ctx, chainID, 5); err != nil {
		t.Fatal(err)
	}
	b1 := msg(t, signbytes.TM2, chainID, signbytes.Prevote, 5, 0, 1, baseTime)
	st.failNext, st.written = errors.New("timed out"), true
	if _, err := g.SignBytes(ctx, b1); !errors.As(err, new(*StoreError)) {
		t.Fatalf("got %v, want a *StoreError", err)
	}
	s, err := g.SignBytes(ctx, b1)
	if err != nil || !s.Cached {
		t.Fatalf("after an unknown outcome that committed: %+v, %v; want the stored signature", s, err)
	}
	b2 := msg(t, signbytes.TM2, chainID, signbytes.Precommit, 5, 0, 1, baseTime)
	st.failNext = errors.New("refused")
	if _, err := g.SignBytes(ctx, b2); !errors.As(err, new(*StoreError)) {
		t.Fatalf("got %v, want a *StoreError", err)
	}
	st.mu.Lock()
	st.down = true
	st.mu.Unlock()
	if _, err := g.SignBytes(ctx, b2); !errors.As(err, new(*StoreError)) {
		t.Fatalf("store down: got %v, want a *StoreError", err)
	}
	st.mu.Lock()
	st.down = false
	st.mu.Unlock()
	if s, err := g.SignBytes(ctx, b2); err != nil || s.Cached {
		t.Fatalf("store back: %+v, %v; want a new signature", s, err)
	}
}

// TestStoreStaleCache: a Guard whose view is behind the Store loses its
// Swap, drops its signature and refuses the conflicting message; one
// above the winner's is signed with the signature already made.
func TestStoreStaleCache(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	a, _ := New(newKey(4), Config{Store: st, AutoInit: true})
	b, _ := New(newKey(4), Config{Store: st, AutoInit: true})
	defer a.Close()
	defer b.Close()
	if _, err := a.SignBytes(ctx, msg(t, signbytes.TM2, chainID, signbytes.Prevote, 9, 0, 1, baseTime)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.State(ctx, chainID); err != nil { // b loads 9/0/2
		t.Fatal(err)
	}
	if _, err := a.SignBytes(ctx, msg(t, signbytes.TM2, chainID, signbytes.Precommit, 9, 0, 1, baseTime)); err != nil {
		t.Fatal(err)
	}
	_, err := b.SignBytes(ctx, msg(t, signbytes.TM2, chainID, signbytes.Precommit, 9, 0, 2, baseTime))
	if !isRefusal(err) {
		t.Fatalf("stale guard signing a conflicting precommit: %v, want a refusal", err)
	}
	bs := b.Stats()
	if bs.Signs != 1 {
		t.Errorf("stale guard: %d key signs, want 1 (its signature dropped)", bs.Signs)
	}
	s, err := b.SignBytes(ctx, msg(t, signbytes.TM2, chainID, signbytes.Precommit, 9, 0, 1, baseTime.Add(time.Second)))
	if err != nil || !s.TimestampChanged {
		t.Fatalf("same precommit, new timestamp: %+v, %v; want the winner's signature", s, err)
	}
	if _, err := b.Repair(ctx, chainID, 100); err == nil {
		t.Error("Repair on a Store succeeded")
	}
}

// TestStoreInitImport: Init and Import write through the Store as they
// write a state file: a first state, a raise, and no lowering.
func TestStoreInitImport(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	key := newKey(6)
	g, _ := New(key, Config{Store: st})
	defer g.Close()
	if _, err := g.SignBytes(ctx, msg(t, signbytes.TM2, chainID, signbytes.Prevote, 3, 0, 1, baseTime)); !errors.Is(err, ErrNoState) {
		t.Fatalf("no state, no AutoInit: %v", err)
	}
	b := msg(t, signbytes.TM2, chainID, signbytes.Precommit, 4, 1, 1, baseTime)
	sig, _ := key.SignContext(ctx, b)
	if err := g.Import(ctx, State{ChainID: chainID, Height: 4, Round: 1, Step: 3, SignBytes: b, Signature: sig}); err != nil {
		t.Fatal(err)
	}
	other, _ := New(newKey(6), Config{Store: st})
	defer other.Close()
	if s, err := other.SignBytes(ctx, b); err != nil || !s.Cached || !bytes.Equal(s.Signature, sig) {
		t.Fatalf("the imported message from another Guard: %+v, %v", s, err)
	}
	if err := other.Init(ctx, chainID, 4); !isRefusal(err) {
		t.Fatalf("Init lowering the imported state: %v", err)
	}
	if err := other.Init(ctx, chainID, 10); err != nil {
		t.Fatal(err)
	}
	if err := g.Import(ctx, State{ChainID: chainID, Height: 4, Round: 1, Step: 3, SignBytes: b, Signature: sig}); !isRefusal(err) {
		t.Fatalf("Import below a state another Guard raised: %v", err)
	}
	if s, err := g.State(ctx, chainID); err != nil || s.Height != 10 {
		t.Fatalf("state after the lost swap: %+v, %v", s, err)
	}
}
