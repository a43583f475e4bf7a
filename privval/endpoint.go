package privval

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/internal/backoff"
	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
)

// Dialect is the version of the CometBFT privval protocol an Endpoint
// speaks, and the sign bytes it builds.
type Dialect uint8

const (
	// V038 is CometBFT v0.38: votes carry an extension (field 9) and its
	// signature (field 10), and the Endpoint signs the extension of every
	// precommit for a block, even an empty one.
	V038 Dialect = iota + 1
	// V034 is Tendermint/CometBFT v0.34: no vote extensions.
	V034
	// GnoTMKMS is the v0.34 protocol as gno v1.7.1's tmkms_listener
	// speaks it (tm2/pkg/bft/privval/upstream): V034's messages, with the
	// sign bytes built as gno's tm2 builds them (signbytes.TM2), which gno
	// verifies. For every real vote and proposal they are V034's bytes.
	GnoTMKMS
)

// String returns "v0.38", "v0.34" or "gno-tmkms".
func (d Dialect) String() string {
	switch d {
	case V038:
		return "v0.38"
	case V034:
		return "v0.34"
	case GnoTMKMS:
		return "gno-tmkms"
	}
	return fmt.Sprintf("Dialect(%d)", uint8(d))
}

func (d Dialect) format() signbytes.Format {
	if d == GnoTMKMS {
		return signbytes.TM2
	}
	return signbytes.CometBFT
}

// Config configures an Endpoint.
type Config struct {
	// Dialect is the protocol version the validator speaks. Required.
	Dialect Dialect

	// Network ("tcp" or "unix") and Address are the validator's
	// priv_validator_laddr (CometBFT) or tmkms_listener listen_addr (gno),
	// dialed with a net.Dialer whose timeout is HandshakeTimeout. Dial,
	// when set, is used instead; it must give up when ctx ends.
	Network, Address string
	Dial             func(ctx context.Context) (net.Conn, error)

	// Handshake secures each connection once dialed (SecretConnection on
	// TCP). Nil speaks the protocol on the connection as it is.
	Handshake Handshake

	// ChainID, when set, is the only chain the Endpoint answers for; a
	// request for another gets a RemoteSignerError.
	ChainID string

	// Timeouts; zero means the Default of the same name.
	IdleTimeout, WriteTimeout, RequestTimeout, HandshakeTimeout time.Duration
	// MinBackoff and MaxBackoff bound the wait between dials, which
	// doubles from MinBackoff after each failure (with jitter) and
	// starts again from MinBackoff after a connection that served a
	// request.
	MinBackoff, MaxBackoff time.Duration

	// OnRequest, if set, is called after each request is answered.
	OnRequest func(RequestInfo)
	// OnDisconnect, if set, is called with the reason each connection
	// ended or each dial failed: a *ProtocolError for a garbled frame,
	// io.EOF when the validator closed it, a net error, a handshake error.
	OnDisconnect func(error)
	// OnConnect, if set, is called when a connection has completed its
	// Handshake, with the validator's identity key (nil without one).
	OnConnect func(peer ed25519.PublicKey)
}

// Endpoint is the signer side of the CometBFT privval protocol: it dials
// the validator's listener, answers PubKey, SignVote, SignProposal and
// Ping requests through a guard.Guard, and dials again, with backoff, when
// the connection ends. Use one Endpoint per validator (or sentry) to
// serve; several may share one Guard.
type Endpoint struct {
	*core
	cfg     Config
	dialect Dialect
	format  signbytes.Format
}

// NewEndpoint returns an Endpoint that signs through g. The guard's key
// must be Ed25519.
func NewEndpoint(g *guard.Guard, cfg Config) (*Endpoint, error) {
	switch cfg.Dialect {
	case V038, V034, GnoTMKMS:
	default:
		return nil, fmt.Errorf("privval: Config.Dialect %v: %w", cfg.Dialect, signer.ErrInvalidArgument)
	}
	if cfg.Dial == nil {
		if cfg.Network != "tcp" && cfg.Network != "unix" || cfg.Address == "" {
			return nil, fmt.Errorf("privval: Config needs Dial, or Network (tcp or unix) and Address: %w", signer.ErrInvalidArgument)
		}
		network, address := cfg.Network, cfg.Address
		timeout := cfg.HandshakeTimeout
		if timeout <= 0 {
			timeout = DefaultHandshakeTimeout
		}
		cfg.Dial = func(ctx context.Context) (net.Conn, error) {
			d := net.Dialer{Timeout: timeout}
			return d.DialContext(ctx, network, address)
		}
	}
	c, err := newCore(g, cfg.ChainID, cfg.RequestTimeout, cfg.OnRequest, cfg.OnDisconnect, cfg.OnConnect)
	if err != nil {
		return nil, err
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&cfg.IdleTimeout, DefaultIdleTimeout)
	def(&cfg.WriteTimeout, DefaultWriteTimeout)
	def(&cfg.HandshakeTimeout, DefaultHandshakeTimeout)
	def(&cfg.MinBackoff, DefaultMinBackoff)
	def(&cfg.MaxBackoff, DefaultMaxBackoff)
	cfg.MaxBackoff = max(cfg.MaxBackoff, cfg.MinBackoff)
	return &Endpoint{core: c, cfg: cfg, dialect: cfg.Dialect, format: cfg.Dialect.format()}, nil
}

// Stats returns the Endpoint's counters and per-phase latencies.
func (e *Endpoint) Stats() Stats { return e.stats() }

// Run dials the validator and serves it until ctx ends, dialing again
// after every dropped connection, failed dial or protocol error. It
// returns ctx's error, once the connection is closed and nothing of it
// runs, or ErrShutdown after Shutdown. Run may be called again after it
// returns, but not twice at once.
func (e *Endpoint) Run(ctx context.Context) error {
	if err := e.drain.enter(); err != nil {
		return err
	}
	defer e.drain.leave()
	wait := backoff.Backoff{Min: e.cfg.MinBackoff, Max: e.cfg.MaxBackoff, Jitter: 0.5}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if e.drain.isDraining() {
			return ErrShutdown
		}
		served, err := e.connect(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, ErrShutdown) {
			return ErrShutdown
		}
		e.disconnected(err)
		if served {
			wait.Reset()
		}
		// The loop's top returns when ctx ended or Shutdown began.
		backoff.SleepUntil(ctx, e.drain.stopping, wait.Next())
	}
}

// connect dials, shakes hands and serves one connection. served reports
// whether it answered any request.
func (e *Endpoint) connect(ctx context.Context) (served bool, err error) {
	conn, err := e.cfg.Dial(ctx)
	if err != nil {
		return false, fmt.Errorf("privval: dial: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	defer conn.Close()
	sc, peer, err := handshake(ctx, e.cfg.Handshake, conn, e.cfg.HandshakeTimeout)
	if err != nil {
		return false, err
	}
	if sc != conn {
		defer sc.Close()
	}
	st, ok := e.drain.add(sc)
	if !ok {
		return false, ErrShutdown
	}
	defer e.drain.remove(st)
	e.connected(peer)
	return e.serve(ctx, st, peer)
}

func (e *Endpoint) serve(ctx context.Context, st *connState, peer []byte) (served bool, err error) {
	conn := st.conn
	br := bufio.NewReaderSize(conn, 4096)
	var in, msg, out []byte
	for {
		if ok, err := e.drain.idle(st, time.Now().Add(e.cfg.IdleTimeout)); !ok {
			return served, ErrShutdown
		} else if err != nil {
			return served, err
		}
		frame, err := readFrame(br, MaxFrame, in)
		if err != nil {
			if e.drain.isDraining() {
				return served, ErrShutdown
			}
			var pe *ProtocolError
			if errors.As(err, &pe) {
				e.protocolError.Add(1)
			}
			return served, err
		}
		in = frame
		e.drain.busy(st)
		req, err := decodeRequest(frame, e.dialect)
		if err != nil {
			e.protocolError.Add(1)
			return served, err
		}
		info := RequestInfo{ChainID: req.chainID, Peer: peer}
		info.Phase, info.Label = requestPhase(req)
		err = e.serveOne(ctx, &info, func(ctx context.Context, info *RequestInfo) (error, error) {
			var refusal error
			msg, refusal = e.answer(ctx, req, info, msg[:0])
			out = appendFrame(out[:0], msg)
			return refusal, writeFrame(conn, out, e.cfg.WriteTimeout)
		})
		if err != nil {
			return served, err
		}
		served = true
	}
}

// requestPhase returns req's phase and its label.
func requestPhase(req request) (signbytes.Phase, string) {
	var p signbytes.Phase
	switch req.kind {
	case msgPubKeyRequest:
		return 0, LabelPubKey
	case msgPingRequest:
		return 0, LabelPing
	case msgSignProposalRequest:
		p = signbytes.Proposal
	default:
		p = signbytes.Prevote
		if req.vote != nil && req.vote.Type == typePrecommit {
			p = signbytes.Precommit
		}
	}
	return p, p.String()
}

// answer appends the response to req to dst and returns the refusal it
// carries, if any.
func (e *Endpoint) answer(ctx context.Context, req request, info *RequestInfo, dst []byte) ([]byte, error) {
	switch req.kind {
	case msgPingRequest:
		return appendPingResponse(dst), nil
	case msgPubKeyRequest:
		if err := e.checkChain(req.chainID); err != nil {
			return appendPubKeyResponse(dst, nil, remote(err), e.dialect), err
		}
		return appendPubKeyResponse(dst, e.pub, nil, e.dialect), nil
	case msgSignVoteRequest:
		v, err := e.signVote(ctx, req, info)
		if err != nil {
			return appendSignedVoteResponse(dst, nil, remote(err), e.dialect), err
		}
		return appendSignedVoteResponse(dst, v, nil, e.dialect), nil
	default: // msgSignProposalRequest
		p, err := e.signProposal(ctx, req, info)
		if err != nil {
			return appendSignedProposalResponse(dst, nil, remote(err), e.dialect), err
		}
		return appendSignedProposalResponse(dst, p, nil, e.dialect), nil
	}
}

func remote(err error) *remoteError {
	return &remoteError{Code: codeOf(err), Description: err.Error()}
}

func (e *Endpoint) signVote(ctx context.Context, req request, info *RequestInfo) (*vote, error) {
	v := req.vote
	if v == nil {
		return nil, invalidRequest("sign vote request without a vote")
	}
	info.Height, info.Round = v.Height, int64(v.Round)
	if err := e.checkChain(req.chainID); err != nil {
		return nil, err
	}
	var phase signbytes.Phase
	switch v.Type {
	case typePrevote:
		phase = signbytes.Prevote
	case typePrecommit:
		phase = signbytes.Precommit
	default:
		return nil, invalidRequest("vote of type %d", v.Type)
	}
	// CometBFT v0.38's FilePV signs the extension of every precommit for
	// a block, even an empty one, and refuses an extension anywhere else.
	ext := e.dialect == V038 && phase == signbytes.Precommit && !v.BlockID.IsZero()
	if !ext && len(v.Extension) > 0 {
		return nil, invalidRequest("a vote extension is only allowed on a precommit for a block")
	}
	m := signbytes.Message{Format: e.format, Phase: phase, Height: v.Height, Round: int64(v.Round),
		BlockID: v.BlockID, Timestamp: v.Timestamp, ChainID: req.chainID}
	var s, es guard.Signed
	var err error
	if ext {
		// The precommit and its extension are signed together: one
		// round to a threshold key's parties, not two.
		em := signbytes.Message{Format: signbytes.CometBFT, Phase: signbytes.VoteExtension, Height: v.Height,
			Round: int64(v.Round), ChainID: req.chainID, Extension: v.Extension}
		s, es, err = e.g.SignWithExtension(ctx, m, em)
		if err == nil {
			info.Cached, info.TimestampChanged = s.Cached, s.TimestampChanged
		}
	} else {
		s, err = e.sign(ctx, m, info)
	}
	if err != nil {
		return nil, err
	}
	out := *v
	out.Signature = s.Signature
	if s.TimestampChanged {
		out.Timestamp = s.Timestamp
	}
	out.ExtensionSignature = es.Signature
	return &out, nil
}

// sign signs m through the guard, which encodes it once and parses
// nothing back; when info is not nil it records there whether the
// signature was cached or the timestamp changed.
func (e *Endpoint) sign(ctx context.Context, m signbytes.Message, info *RequestInfo) (guard.Signed, error) {
	s, err := e.g.SignConsensus(ctx, m)
	if err != nil {
		return guard.Signed{}, err
	}
	if info != nil {
		info.Cached, info.TimestampChanged = s.Cached, s.TimestampChanged
	}
	return s, nil
}

func (e *Endpoint) signProposal(ctx context.Context, req request, info *RequestInfo) (*proposal, error) {
	p := req.proposal
	if p == nil {
		return nil, invalidRequest("sign proposal request without a proposal")
	}
	info.Height, info.Round = p.Height, int64(p.Round)
	if err := e.checkChain(req.chainID); err != nil {
		return nil, err
	}
	if p.Type != typeProposal {
		return nil, invalidRequest("proposal of type %d", p.Type)
	}
	m := signbytes.Message{Format: e.format, Phase: signbytes.Proposal, Height: p.Height, Round: int64(p.Round),
		POLRound: int64(p.POLRound), BlockID: p.BlockID, Timestamp: p.Timestamp, ChainID: req.chainID}
	s, err := e.sign(ctx, m, info)
	if err != nil {
		return nil, err
	}
	out := *p
	out.Signature = s.Signature
	if s.TimestampChanged {
		out.Timestamp = s.Timestamp
	}
	return &out, nil
}
