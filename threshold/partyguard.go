package threshold

import (
	"context"
	"errors"
	"fmt"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
)

// guardShare puts the party's guard in front of a share for msg: a vote
// or proposal goes through the guard's rules and is recorded; a vote
// extension through admitExtension. It returns the wire code of a
// refusal.
func (p *Party) guardShare(msg []byte) (byte, error) {
	ctx := context.Background()
	r, err := p.guard.ParseRequest(msg)
	if err != nil {
		return codeInvalid, err
	}
	if m := r.Message(); m.Phase == signbytes.VoteExtension {
		return p.admitExtension(ctx, m)
	}
	s, err := p.guard.SignRequest(ctx, &r)
	if err != nil {
		if errors.Is(err, signer.ErrDoubleSign) {
			return codeDoubleSign, err
		}
		return codeInvalid, err
	}
	if s.TimestampChanged {
		return codeDoubleSign, fmt.Errorf("threshold: party %d already signed this vote with another timestamp (%v): %w", p.key.ID(), s.Timestamp, signer.ErrDoubleSign)
	}
	return 0, nil
}

// admitExtension decides on a vote extension (CometBFT v0.38). The
// guard's rule for a lone key, an extension only right after the
// precommit for a block at its height and round, cannot hold at a party:
// the coordinator asks any two parties for each signature, so the pair
// asked for a precommit's extension need not be the pair that signed the
// precommit, and a party may not have been asked for that precommit at
// all. The coordinator's own guard applies that rule before it asks. The
// party admits an extension at or above the height and round of the last
// vote or proposal it signed for the chain, and records nothing: an
// extension is no vote, and conflicting extensions are no double sign
// (CometBFT has no evidence of them). The sign bytes of an extension
// cannot be read as a vote or a proposal (their first field differs in
// wire type), so the share serves nothing else.
func (p *Party) admitExtension(ctx context.Context, m signbytes.Message) (byte, error) {
	st, err := p.guard.State(ctx, m.ChainID)
	if err != nil {
		return codeInvalid, err
	}
	if m.Height < st.Height || m.Height == st.Height && m.Round < st.Round {
		return codeDoubleSign, &guard.DoubleSignError{ChainID: m.ChainID, Height: m.Height, Round: m.Round,
			Step: signbytes.Precommit.Step(), LastHeight: st.Height, LastRound: st.Round, LastStep: st.Step,
			Reason: "a vote extension below the party's last signed height and round"}
	}
	return 0, nil
}
