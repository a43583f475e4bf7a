package guard

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
)

// Import sets a chain's state to st: the last message another signer of
// the validator's key signed, with its signature, or, with no sign bytes
// (Step 0), the height and round from which to sign. The Guard then
// signs only what comes strictly after it, and serves st's message again
// as FilePV would (the same signature for the same bytes, or for the same
// vote or proposal with only a new timestamp). Package migrate reads other
// signers' state files into a State.
//
// Import never lowers a state: on a chain whose state is at st's height,
// round and step or after, it changes nothing and returns a
// *DoubleSignError, unless the state is st itself. A st that is not
// consistent (sign bytes that are not a vote or proposal of st's chain at
// its height, round and step, or a step without them) is refused with
// signer.ErrInvalidArgument. On a corrupt state file it returns the
// *CorruptError and changes nothing.
func (g *Guard) Import(ctx context.Context, st State) error {
	rec, err := importRecord(st)
	if err != nil {
		return err
	}
	if g.closed.Load() {
		return fmt.Errorf("guard: %w", signer.ErrClosed)
	}
	c := g.chain(st.ChainID)
	if err := c.acquire(ctx); err != nil {
		return err
	}
	defer c.release()
	_, err = retry(ctx, func() (struct{}, error) { return struct{}{}, g.importLocked(ctx, c, rec) })
	return err
}

// importLocked is Import once c's lock is held.
func (g *Guard) importLocked(ctx context.Context, c *chain, rec record) error {
	st := rec.state()
	g.refresh(c)
	err := g.load(ctx, c)
	if errors.Is(err, ErrNoState) && g.store != nil {
		return g.swap(ctx, c, rec, forBlock(rec))
	}
	if errors.Is(err, ErrNoState) {
		r0, r1 := rec, rec
		r0.Seq, r1.Seq = 1, 2
		if err := g.fsys.Create(c.name, append(r0.encode(), r1.encode()...)); err != nil {
			return &StorageError{Path: g.path(c), Op: "create", Err: err}
		}
		return g.load(ctx, c)
	}
	if err != nil {
		return err
	}
	cur := c.rec
	if !hrsLess(rec, cur) && !hrsLess(cur, rec) && bytes.Equal(cur.SignBytes, rec.SignBytes) && bytes.Equal(cur.Signature, rec.Signature) {
		return nil
	}
	if !hrsLess(cur, rec) {
		return &DoubleSignError{ChainID: st.ChainID, Height: st.Height, Round: st.Round, Step: st.Step,
			LastHeight: cur.Height, LastRound: cur.Round, LastStep: cur.Step,
			Reason: "the state is already at or after the imported one, and Import never lowers it"}
	}
	rec.Seq = cur.Seq + 1
	return g.write(ctx, c, rec, forBlock(rec))
}

// importRecord checks st as decodeSlot checks a stored record.
func importRecord(st State) (record, error) {
	bad := func(why string) (record, error) {
		return record{}, fmt.Errorf("guard: Import(%q, %d/%d/%d): %s: %w", st.ChainID, st.Height, st.Round, st.Step, why, signer.ErrInvalidArgument)
	}
	switch {
	case st.ChainID == "" || len(st.ChainID) > MaxChainIDLen:
		return bad("bad chain id")
	case st.Height < 0 || st.Round < 0 || st.Step < 0 || st.Step > 3:
		return bad("height, round or step out of range")
	case (len(st.SignBytes) == 0) != (len(st.Signature) == 0) || (st.Step == 0) != (len(st.SignBytes) == 0):
		return bad("a step needs its sign bytes and signature, and step 0 has none")
	case len(st.SignBytes) > MaxSignBytes || len(st.Signature) > MaxSignatureLen:
		return bad("sign bytes or signature too long")
	}
	if len(st.SignBytes) > 0 {
		m, err := signbytes.Parse(st.SignBytes)
		if err != nil {
			return bad(err.Error())
		}
		if m.Phase.Step() == 0 || m.Height != st.Height || m.Round != st.Round || m.Step() != st.Step || m.ChainID != st.ChainID {
			return bad(fmt.Sprintf("the sign bytes are a %v", m))
		}
	}
	return record{ChainID: st.ChainID, Height: st.Height, Round: st.Round, Step: st.Step,
		SignBytes: bytes.Clone(st.SignBytes), Signature: bytes.Clone(st.Signature)}, nil
}

// forBlock reports whether r's sign bytes are a precommit for a block.
func forBlock(r record) bool {
	if r.Step != signbytes.Precommit.Step() {
		return false
	}
	m, err := signbytes.Parse(r.SignBytes)
	return err == nil && !m.BlockID.IsZero()
}
