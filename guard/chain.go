package guard

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/signerkit/signerkit/signer"
)

// chain is the state of one chain id, loaded on first use.
type chain struct {
	id   string
	name string
	lock chan struct{} // a mutex whose waiters honour their context

	file   File
	loaded bool
	rec    record
	slot   int   // the slot holding rec
	failed error // set by a failed write or sync; sticks until Close

	// forBlock is true when rec's sign bytes are a precommit for a
	// block, the only message a vote extension may follow. It is kept
	// here so that an extension does not re-parse the stored bytes.
	forBlock bool

	// extMsg and extSig are the last vote extension signed and its
	// signature, handed again to the next sentry that asks.
	extMsg, extSig []byte

	// slotBuf is where write encodes the next record, reused so that a
	// sign allocates no 4 KiB slot (the chain's lock guards it).
	slotBuf []byte
}

func (g *Guard) chain(id string) *chain {
	g.mu.Lock()
	defer g.mu.Unlock()
	c := g.chains[id]
	if c == nil {
		c = &chain{id: id, name: stateFileName(id), lock: make(chan struct{}, 1)}
		g.chains[id] = c
	}
	return c
}

func (c *chain) acquire(ctx context.Context) error {
	select {
	case c.lock <- struct{}{}:
		return nil
	default:
	}
	select {
	case c.lock <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("guard: waiting for chain %q: %w", c.id, ctx.Err())
	}
}

func (c *chain) release() { <-c.lock }

func (g *Guard) path(c *chain) string { return filepath.Join(g.dir, c.name) }

// load reads c's state file, or its state in the Store, if it is not
// loaded yet. The caller holds c's lock.
func (g *Guard) load(ctx context.Context, c *chain) error {
	if g.closed.Load() {
		return fmt.Errorf("guard: %w", signer.ErrClosed)
	}
	if c.failed != nil {
		return c.failed
	}
	if c.loaded {
		return nil
	}
	if g.store != nil {
		return g.loadStore(ctx, c)
	}
	f, err := g.fsys.Open(c.name)
	if errors.Is(err, fs.ErrNotExist) {
		if !g.auto {
			return fmt.Errorf("guard: chain %q (%s): %w", c.id, g.path(c), ErrNoState)
		}
		if err := g.create(ctx, c, 0); err != nil {
			return err
		}
		f, err = g.fsys.Open(c.name)
	}
	if err != nil {
		return &StorageError{Path: g.path(c), Op: "open", Err: err}
	}
	buf := make([]byte, fileSize+1)
	n, err := f.ReadAt(buf, 0)
	if err != nil && err != io.EOF {
		f.Close()
		return &StorageError{Path: g.path(c), Op: "read", Err: err}
	}
	rec, slot, err := decodeFile(buf[:n], c.id)
	if err != nil {
		f.Close()
		return withPath(err, g.path(c))
	}
	c.file, c.rec, c.slot, c.loaded = f, rec, slot, true
	c.forBlock = forBlock(rec) // decodeFile checked its sign bytes parse
	return nil
}

// create makes a new state file for c at height h, step 0.
func (g *Guard) create(ctx context.Context, c *chain, h int64) error {
	if g.store != nil {
		return g.swap(ctx, c, record{ChainID: c.id, Height: h}, false)
	}
	r0 := record{Seq: 1, ChainID: c.id, Height: h}
	r1 := r0
	r1.Seq = 2
	data := append(r0.encode(), r1.encode()...)
	if err := g.fsys.Create(c.name, data); err != nil {
		return &StorageError{Path: g.path(c), Op: "create", Err: err}
	}
	return nil
}

// write stores next in the slot that does not hold the current record,
// syncs, and makes next current; forBlock says whether next's sign bytes
// are a precommit for a block. A failure marks the chain failed. With a
// Store it is swap.
func (g *Guard) write(ctx context.Context, c *chain, next record, forBlock bool) error {
	if g.store != nil {
		return g.swap(ctx, c, next, forBlock)
	}
	slot := 1 - c.slot
	start := time.Now()
	if c.slotBuf == nil {
		c.slotBuf = make([]byte, slotSize)
	}
	_, err := c.file.WriteAt(next.encodeTo(c.slotBuf), int64(slot*slotSize))
	op := "write"
	if err == nil {
		op = "sync"
		err = c.file.Sync()
	}
	g.syncs.Add(1)
	g.syncNanos.Add(int64(time.Since(start)))
	if err != nil {
		c.failed = &StorageError{Path: g.path(c), Op: op, Err: err}
		return c.failed
	}
	c.rec, c.slot, c.forBlock = next, slot, forBlock
	return nil
}

// Init gives a chain its first state, at height h: the Guard will sign
// nothing below h and anything at h or above. Use it to move a validator
// from another signer: h is one more than the last height the old signer
// may have signed at (Init at that height itself allows a second vote
// there). Init on a chain that has state raises it to h, and refuses with
// a *DoubleSignError to lower it; on a corrupt state file it returns the
// *CorruptError and changes nothing.
func (g *Guard) Init(ctx context.Context, chainID string, h int64) error {
	if chainID == "" || len(chainID) > MaxChainIDLen || h < 0 {
		return fmt.Errorf("guard: Init(%q, %d): %w", chainID, h, signer.ErrInvalidArgument)
	}
	if g.closed.Load() {
		return fmt.Errorf("guard: %w", signer.ErrClosed)
	}
	c := g.chain(chainID)
	if err := c.acquire(ctx); err != nil {
		return err
	}
	defer c.release()
	_, err := retry(ctx, func() (struct{}, error) { return struct{}{}, g.initLocked(ctx, c, h) })
	return err
}

// initLocked is Init once c's lock is held.
func (g *Guard) initLocked(ctx context.Context, c *chain, h int64) error {
	g.refresh(c)
	err := g.load(ctx, c)
	if errors.Is(err, ErrNoState) {
		if err := g.create(ctx, c, h); err != nil {
			return err
		}
		return g.load(ctx, c)
	}
	if err != nil {
		return err
	}
	cur := c.rec
	if h == cur.Height && cur.Step == 0 && cur.Round == 0 {
		return nil
	}
	if h <= cur.Height {
		return &DoubleSignError{ChainID: c.id, Height: h, LastHeight: cur.Height, LastRound: cur.Round, LastStep: cur.Step,
			Reason: "Init would lower the state"}
	}
	return g.write(ctx, c, record{Seq: cur.Seq + 1, ChainID: c.id, Height: h}, false)
}

// State returns a chain's double-sign state, reading its file if the Guard
// has not yet; with a Store, it reads the Store every time.
func (g *Guard) State(ctx context.Context, chainID string) (State, error) {
	if g.closed.Load() {
		return State{}, fmt.Errorf("guard: %w", signer.ErrClosed)
	}
	c := g.chain(chainID)
	if err := c.acquire(ctx); err != nil {
		return State{}, err
	}
	defer c.release()
	g.refresh(c)
	if err := g.load(ctx, c); err != nil {
		return State{}, err
	}
	r := c.rec
	return State{ChainID: r.ChainID, Height: r.Height, Round: r.Round, Step: r.Step,
		SignBytes: bytes.Clone(r.SignBytes), Signature: bytes.Clone(r.Signature)}, nil
}

// Close waits for signs in progress, closes the state files and closes
// the wrapped signer. It is idempotent. SignBytes, SignContext, Sign, Init
// and State after Close return an error wrapping signer.ErrClosed.
func (g *Guard) Close() error {
	if g.closed.Swap(true) {
		return nil
	}
	g.mu.Lock()
	chains := make([]*chain, 0, len(g.chains))
	for _, c := range g.chains {
		chains = append(chains, c)
	}
	g.mu.Unlock()
	var errs []error
	for _, c := range chains {
		c.lock <- struct{}{}
		if c.file != nil {
			errs = append(errs, c.file.Close())
			c.file = nil
		}
		c.loaded = false
		<-c.lock
	}
	errs = append(errs, g.s.Close())
	return errors.Join(errs...)
}
