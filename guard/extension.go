package guard

import (
	"bytes"
	"context"
	"fmt"

	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
)

// SignWithExtension signs a precommit for a block and its vote extension
// (CometBFT v0.38, which asks for both in one request), as SignConsensus
// would sign pre and then ext, with the same rules and results, but in
// the time of one sign by the key: when the precommit is new, the key
// signs the extension concurrently with the precommit (a threshold key
// asks its parties for both in one round trip). Nothing of the extension
// is released unless the precommit was signed and its state written and
// synced: a refused precommit starts no extension sign, and when the
// precommit's sign or write fails the extension's signature is dropped.
// An extension carries no double-sign state, so signing it early records
// nothing. A replay of the same bytes gets both signatures cached.
//
// pre must be a precommit for a block and ext a vote extension of the
// same chain, height and round, both in the CometBFT dialect (the only
// one with vote extensions); anything else is an error wrapping
// signer.ErrInvalidMessage. When the precommit
// was signed but the extension's sign failed, the error is returned and
// the precommit stays recorded: asking again gets it cached and signs
// the extension.
func (g *Guard) SignWithExtension(ctx context.Context, pre, ext signbytes.Message) (vote, extension Signed, err error) {
	if err := g.usable(ctx); err != nil {
		return Signed{}, Signed{}, err
	}
	if pre.Phase != signbytes.Precommit || pre.BlockID.IsZero() || ext.Phase != signbytes.VoteExtension ||
		pre.Format != signbytes.CometBFT || ext.Format != signbytes.CometBFT || ext.ChainID != pre.ChainID || ext.Height != pre.Height || ext.Round != pre.Round {
		return Signed{}, Signed{}, fmt.Errorf("guard: a precommit for a block and the vote extension of its height and round are needed: %w", signer.ErrInvalidMessage)
	}
	pr, err := g.NewRequest(pre)
	if err != nil {
		return Signed{}, Signed{}, err
	}
	er, err := g.NewRequest(ext)
	if err != nil {
		return Signed{}, Signed{}, err
	}
	if err := checkMessage(er.m, er.msg); err != nil {
		return Signed{}, Signed{}, err
	}
	x := &extJob{r: &er}
	vote, err = g.signWith(ctx, &pr, x)
	if !x.kept {
		x.drop()
	}
	if err != nil {
		return Signed{}, Signed{}, err
	}
	if !x.kept {
		// The precommit was cached (or written by another Guard of the
		// Store): the extension follows the rules of a lone request.
		extension, err = g.sign(ctx, &er)
		if err != nil {
			return Signed{}, Signed{}, err
		}
		return vote, extension, nil
	}
	if x.err != nil {
		return Signed{}, Signed{}, x.err
	}
	return vote, Signed{Signature: x.sig, SignBytes: bytes.Clone(er.msg)}, nil
}

// extJob is a vote extension signed by the key alongside its precommit.
type extJob struct {
	r      *Request
	cancel context.CancelFunc
	done   chan struct{} // closed when the key has answered; nil: not started
	sig    []byte
	err    error
	// kept is set once the precommit's state is written: sig or err is
	// then the extension's answer.
	kept bool
}

// start has the key sign x's extension in the background, once.
func (g *Guard) startExt(ctx context.Context, x *extJob) {
	if x == nil || x.done != nil {
		return
	}
	xctx, cancel := context.WithCancel(ctx)
	x.cancel, x.done = cancel, make(chan struct{})
	g.signs.Add(1)
	go func() {
		defer close(x.done)
		x.sig, x.err = g.signKey(xctx, x.r)
	}()
}

// keep waits for the extension's sign after its precommit's state was
// written on chain c, whose lock the caller holds, and files the
// signature for replays.
func (x *extJob) keep(c *chain) {
	if x == nil || x.done == nil {
		return
	}
	<-x.done
	x.cancel()
	x.kept = true
	if x.err == nil {
		c.extMsg, c.extSig = bytes.Clone(x.r.msg), bytes.Clone(x.sig)
	}
}

// drop ends the extension's sign, if one was started, and forgets it.
func (x *extJob) drop() {
	if x.done == nil {
		return
	}
	x.cancel()
	<-x.done
	x.sig, x.err = nil, nil
}
