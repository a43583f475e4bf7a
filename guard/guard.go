package guard

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// Config says where a Guard keeps its state and what it accepts.
type Config struct {
	// Dir is the directory that holds the state files, one per chain id.
	// It must exist. It is ignored when FS is set.
	Dir string

	// FS, when not nil, is used instead of DirFS(Dir). Tests use it to
	// inject write and sync failures.
	FS FS

	// AutoInit, when true, starts a chain that has no state file at
	// height 0, as a new CometBFT FilePV does. When false (the default) a
	// chain without state is refused with ErrNoState until Init is called,
	// so that a state directory lost or mistyped cannot silently restart
	// from nothing.
	AutoInit bool

	// Formats is the set of sign-bytes dialects accepted. Zero means
	// signbytes.AnyFormat.
	Formats signbytes.Format

	// Store, when not nil, keeps every chain's state instead of the
	// state files (Dir and FS are then ignored): Guards on several hosts
	// share it, and a signature is released only once the Store has
	// committed it (see Store). Repair and Inspect work on state files
	// only. The Guard does not close it.
	Store Store

	// ChainIDs, when not empty, lists the only chain ids the Guard signs
	// for; a request for any other is refused with an error wrapping
	// signer.ErrInvalidMessage before any file is touched. Empty means any
	// chain id (each one seen gets its own state, and with AutoInit its
	// own file).
	ChainIDs []string

	// WriteAhead, for a key whose sign takes about as long as a state
	// sync or longer (a threshold group, whose round trip to its parties
	// is the sign), records each new vote or proposal before the key
	// signs it, the write and the sign running at once: a sign then takes
	// the longer of the two rather than their sum. The record holds the
	// sign bytes without the signature; the signature is released only
	// once the record is durable, and is kept in memory for a sentry that
	// asks again. After a restart, a request for the recorded bytes (or
	// for them with another timestamp) has the key sign the recorded
	// bytes again, which is no double sign; a conflicting request is
	// refused, as after any signature. A sign that fails after its record
	// is written leaves the height, round and step taken, as a threshold
	// party's guard does. It applies to state files only: with a Store
	// it is ignored.
	WriteAhead bool
}

// Signed is the outcome of a sign the Guard allowed.
type Signed struct {
	// Signature is over SignBytes.
	Signature []byte
	// SignBytes are the bytes Signature is over: the request's, or, when
	// TimestampChanged, those signed earlier at the same height, round and
	// step.
	SignBytes []byte
	// Timestamp is the timestamp in SignBytes (zero for a vote extension).
	Timestamp time.Time
	// Cached is true when Signature came from the state: the wrapped
	// signer was not called.
	Cached bool
	// TimestampChanged is true when the request differed from the message
	// signed earlier only in its timestamp. The caller must put Timestamp
	// back into its vote or proposal: Signature is valid for that one.
	TimestampChanged bool
}

// Stats are counters over a Guard's life.
type Stats struct {
	// Signs is the number of calls to the wrapped signer.
	Signs uint64
	// Cached is the number of signatures served from the state.
	Cached uint64
	// Refused is the number of requests refused as double signs.
	Refused uint64
	// Syncs is the number of state file syncs, and SyncTime the time they
	// took, writes included.
	Syncs    uint64
	SyncTime time.Duration
}

// State is the double-sign state of one chain.
type State struct {
	ChainID string
	// Height, Round and Step are the last signed; Step is 0 for a state
	// made by Init, 1 for a proposal, 2 a prevote, 3 a precommit.
	Height, Round int64
	Step          int8
	// SignBytes and Signature are the last signed message and its
	// signature (nil for a state made by Init).
	SignBytes, Signature []byte
}

// Guard wraps a signer.Signer and refuses double signs. It is itself a
// signer.Signer. It is safe for concurrent use: requests for one chain are
// served one at a time, in the order they take the chain's lock; requests
// for different chains run in parallel.
type Guard struct {
	s     signer.Signer
	rs    RequestSigner // s, when it is one
	fsys  FS
	store Store
	dir   string // for error messages
	auto  bool
	// writeAhead is Config.WriteAhead, off with a Store.
	writeAhead bool
	formats    signbytes.Format

	allowed map[string]bool // nil: any chain id

	mu     sync.Mutex
	chains map[string]*chain
	closed atomic.Bool

	signs, cached, refused, syncs atomic.Uint64
	syncNanos                     atomic.Int64
}

var _ signer.Signer = (*Guard)(nil)

// New returns a Guard around s. It reads no state yet: each chain's file
// is read on its first sign. Closing the Guard closes s.
func New(s signer.Signer, cfg Config) (*Guard, error) {
	if s == nil {
		return nil, fmt.Errorf("guard: nil signer: %w", signer.ErrInvalidArgument)
	}
	g := &Guard{s: s, fsys: cfg.FS, store: cfg.Store, dir: cfg.Dir, auto: cfg.AutoInit, formats: cfg.Formats & signbytes.AnyFormat, chains: map[string]*chain{},
		writeAhead: cfg.WriteAhead && cfg.Store == nil}
	g.rs, _ = s.(RequestSigner)
	if g.formats == 0 {
		g.formats = signbytes.AnyFormat
	}
	if len(cfg.ChainIDs) > 0 {
		g.allowed = make(map[string]bool, len(cfg.ChainIDs))
		for _, id := range cfg.ChainIDs {
			g.allowed[id] = true
		}
	}
	if g.fsys == nil && g.store == nil {
		if cfg.Dir == "" {
			return nil, fmt.Errorf("guard: Config.Dir is empty: %w", signer.ErrInvalidArgument)
		}
		fi, err := os.Stat(cfg.Dir)
		if err != nil {
			return nil, fmt.Errorf("guard: state directory: %w", err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("guard: state directory %s is not a directory: %w", cfg.Dir, signer.ErrInvalidArgument)
		}
		g.fsys = DirFS(cfg.Dir)
	}
	return g, nil
}

// Unwrap returns the wrapped signer.
func (g *Guard) Unwrap() signer.Signer { return g.s }

// Public returns the wrapped signer's public key.
func (g *Guard) Public() crypto.PublicKey { return g.s.Public() }

// Stats returns the Guard's counters.
func (g *Guard) Stats() Stats {
	return Stats{
		Signs: g.signs.Load(), Cached: g.cached.Load(), Refused: g.refused.Load(),
		Syncs: g.syncs.Load(), SyncTime: time.Duration(g.syncNanos.Load()),
	}
}

// Sign implements crypto.Signer for Ed25519-style signers: msg is the whole
// sign bytes and opts.HashFunc() must be 0. rand is ignored. It is
// SignContext with a background context.
func (g *Guard) Sign(_ io.Reader, msg []byte, opts crypto.SignerOpts) ([]byte, error) {
	if opts != nil && opts.HashFunc() != 0 {
		return nil, fmt.Errorf("guard: the guard reads whole sign bytes, not a digest: %w", signer.ErrUnsupported)
	}
	if o, ok := opts.(*ed25519.Options); ok && o.Context != "" {
		return nil, fmt.Errorf("guard: Ed25519ctx: %w", signer.ErrUnsupported)
	}
	return g.SignContext(context.Background(), msg)
}

// SignContext signs msg, the sign bytes of a vote, proposal or vote
// extension, if the double-sign rules allow it (see SignBytes). When the
// request differs from the message already signed at its height, round
// and step only in its timestamp, SignContext cannot hand back a signature
// over msg and returns a *TimestampError that carries the earlier
// timestamp and signature.
func (g *Guard) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	s, err := g.SignBytes(ctx, msg)
	if err != nil {
		return nil, err
	}
	if s.TimestampChanged {
		m, _ := signbytes.Parse(s.SignBytes)
		return nil, &TimestampError{ChainID: m.ChainID, Height: m.Height, Round: m.Round, Step: m.Step(),
			Timestamp: s.Timestamp, SignBytes: s.SignBytes, Signature: s.Signature}
	}
	return s.Signature, nil
}

// SignBytes applies CometBFT FilePV's double-sign rules, which gno's tm2
// applies too, to msg and signs it or refuses:
//
//   - msg must parse as a vote or proposal (or a vote extension) in one of
//     the accepted dialects, with height ≥ 1, round ≥ 0 and a chain id;
//     anything else is an error wrapping signer.ErrInvalidMessage.
//   - Below the chain's last height/round/step: a *DoubleSignError.
//   - At the same height/round/step, identical bytes: the stored signature,
//     Cached, without calling the wrapped signer.
//   - At the same height/round/step, a message that differs only in its
//     timestamp: the stored signature and bytes, with TimestampChanged and
//     the earlier Timestamp.
//   - Anything else at the same height/round/step: a *DoubleSignError.
//   - Above: the wrapped signer signs, the new state is written and synced
//     to the state file (one sync), and only then is the signature
//     returned. If the write or sync fails the signature is dropped and
//     a *StorageError returned.
//
// A vote extension is signed only right after the precommit for a block
// at the same height and round (the state's last message); it changes no
// state and costs no sync. Callers sign a precommit first, then its
// extension.
func (g *Guard) SignBytes(ctx context.Context, msg []byte) (Signed, error) {
	if err := g.usable(ctx); err != nil {
		return Signed{}, err
	}
	r, err := g.ParseRequest(msg)
	if err != nil {
		return Signed{}, err
	}
	return g.sign(ctx, &r)
}

// SignConsensus is SignBytes for a vote, proposal or vote extension the
// caller holds as a signbytes.Message, such as one decoded from a node's
// request: it encodes m in its one dialect, m.Format, which the Guard must
// accept, and applies the rules of SignBytes to those bytes without
// parsing them back. Signed.SignBytes are m's bytes, or the earlier ones
// when only the timestamp differs.
func (g *Guard) SignConsensus(ctx context.Context, m signbytes.Message) (Signed, error) {
	if err := g.usable(ctx); err != nil {
		return Signed{}, err
	}
	r, err := g.NewRequest(m)
	if err != nil {
		return Signed{}, err
	}
	return g.sign(ctx, &r)
}

// usable returns ctx's error, or ErrClosed after Close, before any work.
func (g *Guard) usable(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if g.closed.Load() {
		return fmt.Errorf("guard: %w", signer.ErrClosed)
	}
	return nil
}

// sign applies the rules to r.
func (g *Guard) sign(ctx context.Context, r *Request) (Signed, error) { return g.signWith(ctx, r, nil) }

// signWith applies the rules to r; x, when not nil, is a vote extension
// the key signs alongside r, a new precommit, kept only once r's state is
// written (see SignWithExtension).
func (g *Guard) signWith(ctx context.Context, r *Request, x *extJob) (Signed, error) {
	m, msg := &r.m, r.msg
	if err := checkMessage(*m, msg); err != nil {
		return Signed{}, err
	}
	if g.allowed != nil && !g.allowed[m.ChainID] {
		return Signed{}, fmt.Errorf("guard: chain id %q is not in Config.ChainIDs: %w", m.ChainID, signer.ErrInvalidMessage)
	}
	c := g.chain(m.ChainID)
	if err := c.acquire(ctx); err != nil {
		return Signed{}, err
	}
	defer c.release()
	if g.store == nil {
		return g.signLocked(ctx, c, r, nil, x)
	}
	// A Swap that loses to another Guard has c hold the state that won:
	// the rules run again on it, with the signature already made.
	var sig []byte
	return retry(ctx, func() (Signed, error) { return g.signLocked(ctx, c, r, &sig, x) })
}

// signLocked applies the rules to r on chain c, whose lock the caller
// holds. With a Store, *made keeps the signature across tries, so that a
// lost Swap does not cost a second sign by the key.
func (g *Guard) signLocked(ctx context.Context, c *chain, r *Request, made *[]byte, x *extJob) (Signed, error) {
	m, msg := &r.m, r.msg
	if err := g.load(ctx, c); err != nil {
		return Signed{}, err
	}
	if m.Phase == signbytes.VoteExtension {
		return g.signExtension(ctx, c, r)
	}
	step := m.Step()
	cur := c.rec
	refuse := func(reason string) (Signed, error) {
		g.refused.Add(1)
		return Signed{}, &DoubleSignError{ChainID: m.ChainID, Height: m.Height, Round: m.Round, Step: step,
			LastHeight: cur.Height, LastRound: cur.Round, LastStep: cur.Step, Reason: reason,
			NeverSigned: len(cur.Signature) == 0 && m.Height < cur.Height}
	}
	switch {
	case m.Height < cur.Height:
		return refuse("height regression")
	case m.Height == cur.Height && m.Round < cur.Round:
		return refuse("round regression")
	case m.Height == cur.Height && m.Round == cur.Round && step < cur.Step:
		return refuse("step regression")
	case m.Height == cur.Height && m.Round == cur.Round && step == cur.Step:
		if bytes.Equal(msg, cur.SignBytes) {
			if len(cur.Signature) == 0 { // written ahead, its signature not kept
				return g.signRecorded(ctx, c, r, x, m.Timestamp, false)
			}
			g.cached.Add(1)
			return Signed{Signature: bytes.Clone(cur.Signature), SignBytes: bytes.Clone(cur.SignBytes), Timestamp: m.Timestamp, Cached: true}, nil
		}
		if ts, ok := onlyTimestampDiffers(*m, cur.SignBytes); ok {
			if len(cur.Signature) == 0 {
				old, err := g.ParseRequest(cur.SignBytes)
				if err != nil {
					return Signed{}, err
				}
				old.trace = r.trace
				return g.signRecorded(ctx, c, &old, x, ts, true)
			}
			g.cached.Add(1)
			return Signed{Signature: bytes.Clone(cur.Signature), SignBytes: bytes.Clone(cur.SignBytes), Timestamp: ts, Cached: true, TimestampChanged: true}, nil
		}
		return refuse("conflicting data at the same height/round/step")
	}

	var sig []byte
	if made != nil {
		sig = *made
	}
	if g.writeAhead { // no Store, so no signature made by an earlier try
		return g.signAhead(ctx, c, r, x)
	}
	if sig == nil {
		g.startExt(ctx, x)
		g.signs.Add(1)
		var err error
		if sig, err = g.signKey(ctx, r); err != nil {
			return Signed{}, err
		}
		if len(sig) > MaxSignatureLen {
			return Signed{}, fmt.Errorf("guard: the signer returned a %d-byte signature, more than %d: %w", len(sig), MaxSignatureLen, signer.ErrUnsupported)
		}
		if made != nil {
			*made = sig
		}
	}
	next := record{Seq: cur.Seq + 1, ChainID: m.ChainID, Height: m.Height, Round: m.Round, Step: step,
		SignBytes: bytes.Clone(msg), Signature: bytes.Clone(sig)}
	tr := r.stateTrace(ctx)
	written := tr.Start()
	if err := g.write(ctx, c, next, m.Phase == signbytes.Precommit && !m.BlockID.IsZero()); err != nil {
		return Signed{}, err
	}
	tr.Measured(signertrace.StageState, written)
	x.keep(c)
	return Signed{Signature: sig, SignBytes: bytes.Clone(msg), Timestamp: m.Timestamp}, nil
}

func checkMessage(m signbytes.Message, msg []byte) error {
	switch {
	case m.ChainID == "":
		return fmt.Errorf("guard: sign bytes without a chain id: %w", signer.ErrInvalidMessage)
	case len(m.ChainID) > MaxChainIDLen:
		return fmt.Errorf("guard: chain id of %d bytes, more than %d: %w", len(m.ChainID), MaxChainIDLen, signer.ErrInvalidMessage)
	case m.Height < 1:
		return fmt.Errorf("guard: height %d: %w", m.Height, signer.ErrInvalidMessage)
	case m.Round < 0:
		return fmt.Errorf("guard: round %d: %w", m.Round, signer.ErrInvalidMessage)
	case m.Phase != signbytes.VoteExtension && len(msg) > MaxSignBytes:
		return fmt.Errorf("guard: %d bytes of sign bytes, more than %d: %w", len(msg), MaxSignBytes, signer.ErrMessageTooLarge)
	}
	return nil
}

// onlyTimestampDiffers reports whether m, rebuilt with the timestamp of
// the earlier sign bytes old, is old byte for byte, and returns that
// timestamp.
func onlyTimestampDiffers(m signbytes.Message, old []byte) (time.Time, bool) {
	om, err := signbytes.Parse(old)
	if err != nil || om.Phase == signbytes.VoteExtension {
		return time.Time{}, false
	}
	for _, f := range []signbytes.Format{signbytes.TM2, signbytes.CometBFT} {
		if m.Format&om.Format&f == 0 {
			continue
		}
		one := m
		one.Format = f
		if b, err := one.WithTimestamp(om.Timestamp); err == nil && bytes.Equal(b, old) {
			return om.Timestamp, true
		}
	}
	return time.Time{}, false
}

func (g *Guard) signExtension(ctx context.Context, c *chain, r *Request) (Signed, error) {
	m, msg := &r.m, r.msg
	cur := c.rec
	if !c.forBlock || cur.Height != m.Height || cur.Round != m.Round {
		g.refused.Add(1)
		return Signed{}, &DoubleSignError{ChainID: m.ChainID, Height: m.Height, Round: m.Round, Step: signbytes.Precommit.Step(),
			LastHeight: cur.Height, LastRound: cur.Round, LastStep: cur.Step,
			Reason: "a vote extension is signed only right after its precommit for a block"}
	}
	// Sentries that each forward the precommit ask for its extension too:
	// the same bytes get the signature already made, from memory (an
	// extension carries no double-sign state, so nothing is written).
	if c.extSig != nil && bytes.Equal(c.extMsg, msg) {
		g.cached.Add(1)
		return Signed{Signature: bytes.Clone(c.extSig), SignBytes: bytes.Clone(msg), Cached: true}, nil
	}
	g.signs.Add(1)
	sig, err := g.signKey(ctx, r)
	if err != nil {
		return Signed{}, err
	}
	c.extMsg, c.extSig = bytes.Clone(msg), bytes.Clone(sig)
	return Signed{Signature: sig, SignBytes: bytes.Clone(msg)}, nil
}
