package guard

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// signAhead is signLocked's new vote or proposal under Config.WriteAhead:
// the record of r, without its signature, is written while the key signs
// (and x's extension with it), and the signature is released only once
// the record is durable. c's lock is held; the write is the only code
// that touches c until both are done.
func (g *Guard) signAhead(ctx context.Context, c *chain, r *Request, x *extJob) (Signed, error) {
	m, msg := &r.m, r.msg
	next := record{Seq: c.rec.Seq + 1, ChainID: m.ChainID, Height: m.Height, Round: m.Round, Step: m.Step(),
		SignBytes: bytes.Clone(msg)}
	wrote := make(chan error, 1)
	var took time.Duration
	go func() {
		start := time.Now()
		err := g.write(ctx, c, next, m.Phase == signbytes.Precommit && !m.BlockID.IsZero())
		took = time.Since(start)
		wrote <- err
	}()
	g.startExt(ctx, x)
	g.signs.Add(1)
	sig, err := g.signKey(ctx, r)
	if werr := <-wrote; werr != nil {
		return Signed{}, werr
	}
	r.stateTrace(ctx).MeasuredDuration(signertrace.StageState, took)
	if err != nil {
		return Signed{}, err
	}
	return g.keepSignature(c, r, x, sig, m.Timestamp, false)
}

// signRecorded has the key sign the bytes c's record holds without a
// signature (written ahead, and the process restarted before it was
// kept): r is a request for them, ts the timestamp to answer with. The
// height, round and step are recorded already, so nothing is written.
func (g *Guard) signRecorded(ctx context.Context, c *chain, r *Request, x *extJob, ts time.Time, tsChanged bool) (Signed, error) {
	g.startExt(ctx, x)
	g.signs.Add(1)
	sig, err := g.signKey(ctx, r)
	if err != nil {
		return Signed{}, err
	}
	return g.keepSignature(c, r, x, sig, ts, tsChanged)
}

// keepSignature puts sig into c's record in memory, for a sentry that
// asks again, keeps x's extension, and returns the answer.
func (g *Guard) keepSignature(c *chain, r *Request, x *extJob, sig []byte, ts time.Time, tsChanged bool) (Signed, error) {
	if len(sig) > MaxSignatureLen {
		return Signed{}, fmt.Errorf("guard: the signer returned a %d-byte signature, more than %d: %w", len(sig), MaxSignatureLen, signer.ErrUnsupported)
	}
	c.rec.Signature = bytes.Clone(sig)
	x.keep(c)
	return Signed{Signature: sig, SignBytes: bytes.Clone(r.msg), Timestamp: ts, TimestampChanged: tsChanged}, nil
}
