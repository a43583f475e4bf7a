package guard

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

// TestSignConsensusAsSignBytes: SignConsensus gives, message for message,
// what SignBytes gives for the message's bytes — signatures, cached
// answers, timestamp-only answers and refusals alike.
func TestSignConsensusAsSignBytes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	key := signertest.NewFake(4)
	a := newGuard(t, key, Config{FS: memFS{}, AutoInit: true})
	b := newGuard(t, signertest.NewFake(4), Config{FS: memFS{}, AutoInit: true})
	block := func(tag byte) signbytes.BlockID {
		return signbytes.BlockID{Hash: bytes.Repeat([]byte{tag}, 32), PartSetHeader: signbytes.PartSetHeader{Total: 1, Hash: bytes.Repeat([]byte{tag + 1}, 32)}}
	}
	msgs := []signbytes.Message{
		{Phase: signbytes.Proposal, Height: 3, POLRound: -1, BlockID: block(1), Timestamp: baseTime},
		{Phase: signbytes.Prevote, Height: 3, BlockID: block(1), Timestamp: baseTime},
		{Phase: signbytes.Prevote, Height: 3, BlockID: block(1), Timestamp: baseTime},                  // the same again: cached
		{Phase: signbytes.Prevote, Height: 3, BlockID: block(1), Timestamp: baseTime.Add(time.Second)}, // timestamp only
		{Phase: signbytes.Prevote, Height: 3, BlockID: block(9), Timestamp: baseTime},                  // conflict
		{Phase: signbytes.Precommit, Height: 3, BlockID: block(1), Timestamp: baseTime},
		{Phase: signbytes.VoteExtension, Height: 3, Extension: []byte("ext")},
		{Phase: signbytes.Prevote, Height: 2, BlockID: block(1), Timestamp: baseTime}, // below
	}
	for i, m := range msgs {
		m.ChainID, m.Format = chainID, signbytes.CometBFT
		sb, err := m.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		got, gerr := a.SignConsensus(ctx, m)
		want, werr := b.SignBytes(ctx, sb)
		if (gerr == nil) != (werr == nil) || (gerr != nil && gerr.Error() != werr.Error()) {
			t.Fatalf("message %d: SignConsensus %v, SignBytes %v", i, gerr, werr)
		}
		if !bytes.Equal(got.Signature, want.Signature) || !bytes.Equal(got.SignBytes, want.SignBytes) ||
			got.Cached != want.Cached || got.TimestampChanged != want.TimestampChanged || !got.Timestamp.Equal(want.Timestamp) {
			t.Fatalf("message %d: SignConsensus %+v, SignBytes %+v", i, got, want)
		}
		if gerr == nil {
			key.Verify(t, got.SignBytes, got.Signature)
		}
	}
	// One dialect, an accepted one.
	m := msgs[0]
	m.ChainID = chainID
	for _, f := range []signbytes.Format{0, signbytes.AnyFormat} {
		m.Format = f
		if _, err := a.SignConsensus(ctx, m); !errors.Is(err, signer.ErrInvalidMessage) {
			t.Errorf("format %v: %v", f, err)
		}
	}
	tm2Only := newGuard(t, signertest.NewFake(4), Config{FS: memFS{}, AutoInit: true, Formats: signbytes.TM2})
	m.Format = signbytes.CometBFT
	if _, err := tm2Only.SignConsensus(ctx, m); !errors.Is(err, signer.ErrInvalidMessage) {
		t.Errorf("a CometBFT message to a tm2-only guard: %v", err)
	}
}
