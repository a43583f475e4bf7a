package guard

import (
	"context"
	"crypto/ed25519"
	"errors"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
)

// An imported precommit is served again as FilePV would serve it, its
// conflicts and everything before it are refused, and what follows is
// signed; the state survives a reopen.
func TestImportLastSign(t *testing.T) {
	ctx := context.Background()
	const id = "imp"
	key := newKey(5)
	pub := key.Public().(ed25519.PublicKey)
	ts := time.Date(2026, 12, 5, 1, 2, 3, 0, time.UTC)
	pc := msg(t, signbytes.CometBFT, id, signbytes.Precommit, 20, 1, 7, ts)
	sig := ed25519.Sign(ed25519.NewKeyFromSeed(seed(5)), pc)
	dir := t.TempDir()
	g, err := New(key, Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	st := State{ChainID: id, Height: 20, Round: 1, Step: 3, SignBytes: pc, Signature: sig}
	if err := g.Import(ctx, st); err != nil {
		t.Fatal(err)
	}
	if err := g.Import(ctx, st); err != nil {
		t.Fatalf("the same import again: %v", err)
	}
	g.Close() // closes key too
	g, err = New(newKey(5), Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	s, err := g.SignBytes(ctx, pc)
	if err != nil || !s.Cached || string(s.Signature) != string(sig) {
		t.Fatalf("the imported precommit again: %+v %v", s, err)
	}
	s, err = g.SignBytes(ctx, msg(t, signbytes.CometBFT, id, signbytes.Precommit, 20, 1, 7, ts.Add(time.Second)))
	if err != nil || !s.TimestampChanged || !s.Timestamp.Equal(ts) || !ed25519.Verify(pub, s.SignBytes, s.Signature) {
		t.Fatalf("with a new timestamp: %+v %v", s, err)
	}
	if g.Stats().Signs != 0 {
		t.Fatalf("the key signed %d times", g.Stats().Signs)
	}
	for _, b := range [][]byte{
		msg(t, signbytes.CometBFT, id, signbytes.Precommit, 20, 1, 8, ts),
		msg(t, signbytes.CometBFT, id, signbytes.Prevote, 20, 1, 7, ts),
		msg(t, signbytes.CometBFT, id, signbytes.Proposal, 20, 0, 7, ts),
		msg(t, signbytes.CometBFT, id, signbytes.Precommit, 19, 5, 7, ts),
	} {
		var ds *DoubleSignError
		if _, err := g.SignBytes(ctx, b); !errors.As(err, &ds) {
			t.Fatalf("%x: %v", b, err)
		}
	}
	next := msg(t, signbytes.CometBFT, id, signbytes.Prevote, 20, 2, 9, ts)
	s, err = g.SignBytes(ctx, next)
	if err != nil || s.Cached || !ed25519.Verify(pub, next, s.Signature) {
		t.Fatalf("the next round: %+v %v", s, err)
	}
	// Import never lowers the state, nor replaces it at the same step.
	for _, back := range []State{st, {ChainID: id, Height: 20, Round: 2}, {ChainID: id, Height: 3}} {
		var ds *DoubleSignError
		if err := g.Import(ctx, back); !errors.As(err, &ds) || ds.LastRound != 2 || ds.LastStep != 2 {
			t.Fatalf("Import(%d/%d/%d) over 20/2/2: %v", back.Height, back.Round, back.Step, err)
		}
	}
	if err := g.Import(ctx, State{ChainID: id, Height: 20, Round: 3}); err != nil {
		t.Fatalf("raising to the next round: %v", err)
	}
	if _, err := g.SignBytes(ctx, msg(t, signbytes.CometBFT, id, signbytes.Precommit, 20, 2, 9, ts)); !errors.Is(err, signer.ErrDoubleSign) {
		t.Fatalf("after raising: %v", err)
	}
}

// A state without sign bytes, imported over an Init state, starts there.
func TestImportRaisesInit(t *testing.T) {
	ctx := context.Background()
	g, err := New(newKey(6), Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.Init(ctx, "c", 1); err != nil {
		t.Fatal(err)
	}
	if err := g.Import(ctx, State{ChainID: "c", Height: 40, Round: 1}); err != nil {
		t.Fatal(err)
	}
	got, err := g.State(ctx, "c")
	if err != nil || got.Height != 40 || got.Round != 1 || got.Step != 0 {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := g.SignBytes(ctx, msg(t, signbytes.TM2, "c", signbytes.Precommit, 40, 0, 1, time.Unix(1e9, 0))); !errors.Is(err, signer.ErrDoubleSign) {
		t.Fatalf("round 0 after importing round 1: %v", err)
	}
	if _, err := g.SignBytes(ctx, msg(t, signbytes.TM2, "c", signbytes.Proposal, 40, 1, 1, time.Unix(1e9, 0))); err != nil {
		t.Fatal(err)
	}
}

// An inconsistent State is refused and nothing is written.
func TestImportRefusesInconsistent(t *testing.T) {
	ctx := context.Background()
	ts := time.Unix(1e9, 0)
	pc := msg(t, signbytes.TM2, "c", signbytes.Precommit, 5, 0, 1, ts)
	sig := make([]byte, 64)
	for _, st := range []State{
		{ChainID: "", Height: 1},
		{ChainID: "c", Height: -1},
		{ChainID: "c", Height: 1, Step: 4},
		{ChainID: "c", Height: 5, Step: 3},
		{ChainID: "c", Height: 5, Step: 0, SignBytes: pc, Signature: sig},
		{ChainID: "c", Height: 5, Step: 3, SignBytes: pc},
		{ChainID: "c", Height: 6, Step: 3, SignBytes: pc, Signature: sig},
		{ChainID: "c", Height: 5, Step: 2, SignBytes: pc, Signature: sig},
		{ChainID: "d", Height: 5, Step: 3, SignBytes: pc, Signature: sig},
		{ChainID: "c", Height: 5, Step: 3, SignBytes: []byte{1, 2, 3}, Signature: sig},
	} {
		dir := t.TempDir()
		g, err := New(newKey(6), Config{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		mustErr(t, g.Import(ctx, st), signer.ErrInvalidArgument)
		id := st.ChainID
		if id == "" {
			id = "c"
		}
		if _, err := g.State(ctx, id); !errors.Is(err, ErrNoState) {
			t.Fatalf("%+v: a state was made: %v", st, err)
		}
		g.Close()
	}
}

func seed(b byte) []byte {
	s := make([]byte, ed25519.SeedSize)
	for i := range s {
		s[i] = b
	}
	return s
}
