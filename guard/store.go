package guard

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// A Store keeps the double-sign state of each chain outside the Guard's
// state files, so that Guards on several hosts, each with the same key,
// share one state (package guard/etcdstore keeps it in etcd). Set it in
// Config.Store; without one, the Guard keeps its state files (Config.Dir
// or Config.FS), as it always has.
//
// Each chain's state has a version, which changes at every write. The
// Guard reads a state and its version with Load, applies its rules to it,
// signs, and releases the signature only after Swap has replaced exactly
// that version by the new state in one atomic, linearizable
// compare-and-swap. Of two Guards that sign conflicting messages from the
// same state, only one Swap commits: the other gets a *ConflictError with
// the state that won, applies the rules to it again (serving the stored
// signature for the same bytes, refusing a conflict) and drops its own
// signature.
//
// A Store is safe for concurrent use. The Guard does not close it: one
// Store may serve several Guards.
type Store interface {
	// Load returns chainID's state and its version, read so that any
	// Swap that committed before Load began is seen. With no state it
	// returns an error wrapping ErrNoState.
	Load(ctx context.Context, chainID string) (State, uint64, error)
	// Swap replaces chainID's state, if its version is still prev (0:
	// there is no state yet), by next, and returns next's version. If the
	// version is not prev, nothing is written and the error is a
	// *ConflictError holding the state there is. Any other error leaves
	// it unknown whether next was written; the Guard then drops the
	// signature and loads the state again on the next request.
	Swap(ctx context.Context, chainID string, prev uint64, next State) (uint64, error)
	// Name says where the state is, for error messages (an etcd URL with
	// its key prefix, say), without secrets.
	Name() string
}

// ConflictError is a Store's answer to a Swap whose expected version was
// not the current one: another writer got there first. Current and
// Version are the state there is and its version (Version 0: none).
type ConflictError struct {
	ChainID string
	Current State
	Version uint64
}

// Error describes the conflict.
func (e *ConflictError) Error() string {
	return fmt.Sprintf("guard: chain %q: the shared state moved to version %d (%d/%d/%d) meanwhile",
		e.ChainID, e.Version, e.Current.Height, e.Current.Round, e.Current.Step)
}

// StoreError is a Store that could not be read or written: unreachable,
// without quorum, or past the request's deadline. The signature being
// made, if any, is dropped. Unlike a *StorageError it does not stick:
// the chain loads its state again on the next request, and signs as soon
// as the Store answers. Err is the Store's error.
type StoreError struct {
	Store string
	Op    string // "load" or "swap"
	Err   error
}

// Error describes the failure.
func (e *StoreError) Error() string {
	return fmt.Sprintf("guard: %s shared state %s: %v", e.Op, e.Store, e.Err)
}

// Unwrap returns Err.
func (e *StoreError) Unwrap() error { return e.Err }

// loadStore reads c's state from the Store. The caller holds c's lock.
func (g *Guard) loadStore(ctx context.Context, c *chain) error {
	st, ver, err := g.store.Load(ctx, c.id)
	if errors.Is(err, ErrNoState) {
		if !g.auto {
			return fmt.Errorf("guard: chain %q (%s): %w", c.id, g.store.Name(), ErrNoState)
		}
		err := g.swap(ctx, c, record{ChainID: c.id}, false)
		if err == errStale && c.loaded {
			return nil // another Guard made it first
		}
		return err
	}
	if errors.As(err, new(*CorruptError)) {
		return err
	}
	if err != nil {
		return &StoreError{Store: g.store.Name(), Op: "load", Err: err}
	}
	return g.adopt(c, st, ver)
}

// adopt makes st, at version ver, c's current state, after checking it
// as Import checks a state.
func (g *Guard) adopt(c *chain, st State, ver uint64) error {
	if ver == 0 {
		c.loaded = false
		return fmt.Errorf("guard: chain %q (%s): %w", c.id, g.store.Name(), ErrNoState)
	}
	rec, err := importRecord(st)
	if err == nil && st.ChainID != c.id {
		err = fmt.Errorf("it is chain %q's", st.ChainID)
	}
	if err != nil {
		c.loaded = false
		return &CorruptError{Path: g.store.Name(), Reason: fmt.Sprintf("the stored state of chain %q is not valid: %v", c.id, err)}
	}
	rec.Seq = ver
	c.rec, c.loaded, c.forBlock = rec, true, forBlock(rec)
	return nil
}

// refresh makes the next load of c read the Store again: Init, Import
// and State answer from the shared state as it is, not from what this
// Guard last saw. The caller holds c's lock.
func (g *Guard) refresh(c *chain) {
	if g.store != nil {
		c.loaded = false
	}
}

// errStale says a Swap lost to another writer: c now holds the state that
// won, and the rules are to be applied again.
var errStale = errors.New("guard: the shared state moved")

// swap writes next over c's current state in the Store. On a conflict it
// adopts the winner's state and returns errStale; on any other failure
// c is left to be loaded again.
func (g *Guard) swap(ctx context.Context, c *chain, next record, forBlock bool) error {
	prev := uint64(0)
	if c.loaded {
		prev = c.rec.Seq
	}
	start := time.Now()
	ver, err := g.store.Swap(ctx, c.id, prev, next.state())
	g.syncs.Add(1)
	g.syncNanos.Add(int64(time.Since(start)))
	var ce *ConflictError
	switch {
	case errors.As(err, &ce):
		if err := g.adopt(c, ce.Current, ce.Version); err != nil && !errors.Is(err, ErrNoState) {
			return err
		}
		return errStale
	case errors.As(err, new(*CorruptError)):
		c.loaded = false
		return err
	case err != nil:
		c.loaded = false
		return &StoreError{Store: g.store.Name(), Op: "swap", Err: err}
	}
	next.Seq = ver
	c.rec, c.loaded, c.forBlock = next, true, forBlock
	return nil
}

// retry runs f until it does not return errStale, at most 64 times (each
// errStale is another writer's committed write, so they end).
func retry[T any](ctx context.Context, f func() (T, error)) (T, error) {
	for i := 0; ; i++ {
		v, err := f()
		if err != errStale {
			return v, err
		}
		if i == 63 || ctx.Err() != nil {
			return v, fmt.Errorf("guard: the shared state kept moving: %w", errors.Join(err, ctx.Err()))
		}
	}
}
