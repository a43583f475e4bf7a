package privval

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signerstats"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// Labels of requests that are not signs. Signs are labelled with their
// phase: signbytes.Proposal.String(), Prevote's and Precommit's
// ("proposal", "prevote", "precommit"), or LabelSign for native sign bytes
// that are not a vote or proposal.
const (
	LabelPubKey = "pubkey"
	LabelPing   = "ping"
	LabelSign   = "sign"
)

// Handshake secures a connection just made (dialed by an Endpoint,
// accepted by a Server): typically a SecretConnection handshake that also
// checks the peer's identity key against an allowlist. It returns the
// connection to speak the protocol over and the peer's identity key (nil
// when the channel has none). It must give up when ctx ends. A nil
// Handshake leaves the connection as it is, which is right for Unix
// sockets.
type Handshake func(ctx context.Context, conn net.Conn) (net.Conn, ed25519.PublicKey, error)

// RequestInfo describes one request an Endpoint or Server served, as given
// to the OnRequest hooks.
type RequestInfo struct {
	// Label is the request's phase ("proposal", "prevote", "precommit"),
	// or LabelPubKey, LabelPing or LabelSign.
	Label string
	// Phase is the request's phase, typed: signbytes.Proposal, Prevote or
	// Precommit (a vote extension's is its precommit's), or 0 for a
	// request that is not a vote or proposal.
	Phase signbytes.Phase
	// ChainID, Height and Round are the request's (zero where it has
	// none).
	ChainID       string
	Height, Round int64
	// Peer is the validator's identity key from the Handshake, if any.
	Peer ed25519.PublicKey
	// Start is when the request had been read and Duration the time from
	// then until the response was written.
	Start    time.Time
	Duration time.Duration
	// Cached and TimestampChanged are the guard's (guard.Signed).
	Cached, TimestampChanged bool
	// Err is why the request was refused: the error sent back to the
	// validator. It is nil for a request served.
	Err error
}

// Stats are an Endpoint's or Server's counters and per-phase latencies.
type Stats struct {
	// Phases holds, per label (see RequestInfo.Label), the count, errors
	// (refused requests), min, p50, p90, p99 and max of the time from a
	// request read to its response written, guard and signer included.
	Phases signerstats.Snapshot
	// Connections counts connections that completed their handshake.
	Connections uint64
	// Requests counts requests answered, Refused those answered with an
	// error, and ProtocolErrors the frames that ended a connection.
	Requests, Refused, ProtocolErrors uint64
}

// core is what the Endpoint and the Server share: the guard, the checks
// and the statistics.
type core struct {
	g              *guard.Guard
	pub            ed25519.PublicKey
	chainID        string
	requestTimeout time.Duration
	onRequest      func(RequestInfo)
	onDisconnect   func(error)
	onConnect      func(ed25519.PublicKey)

	drain drain

	phases                                  signerstats.Recorder
	conns, requests, refused, protocolError atomic.Uint64
}

func newCore(g *guard.Guard, chainID string, requestTimeout time.Duration, onRequest func(RequestInfo), onDisconnect func(error), onConnect func(ed25519.PublicKey)) (*core, error) {
	if g == nil {
		return nil, fmt.Errorf("privval: nil guard: %w", signer.ErrInvalidArgument)
	}
	pub, ok := g.Public().(ed25519.PublicKey)
	if !ok || len(pub) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("privval: the validator key is %T; gno and CometBFT validators here take Ed25519: %w", g.Public(), signer.ErrUnsupported)
	}
	if requestTimeout <= 0 {
		requestTimeout = DefaultRequestTimeout
	}
	c := &core{g: g, pub: pub, chainID: chainID, requestTimeout: requestTimeout,
		onRequest: onRequest, onDisconnect: onDisconnect, onConnect: onConnect}
	c.phases.Start(time.Now())
	c.drain.init()
	return c, nil
}

func (c *core) stats() Stats {
	return Stats{Phases: c.phases.Snapshot(), Connections: c.conns.Load(), Requests: c.requests.Load(),
		Refused: c.refused.Load(), ProtocolErrors: c.protocolError.Load()}
}

func (c *core) checkChain(chainID string) error {
	if c.chainID != "" && chainID != c.chainID {
		return invalidRequest("chain id %q, this signer serves %q", chainID, c.chainID)
	}
	return nil
}

// serveOne times and reports one request. handle answers it, writing the
// response, and returns the refusal sent (nil when served) and an error
// that ends the connection.
func (c *core) serveOne(ctx context.Context, info *RequestInfo, handle func(ctx context.Context, info *RequestInfo) (refusal, fatal error)) error {
	info.Start = time.Now()
	// The label tells the signer below which phase it signs (the
	// daemon's per-phase backend metrics read it).
	ctx, cancel := context.WithTimeout(signertrace.WithLabel(ctx, info.Label), c.requestTimeout)
	refusal, fatal := handle(ctx, info)
	cancel()
	info.Duration = time.Since(info.Start)
	info.Err = refusal
	c.phases.Record(info.Label, info.Duration, cmp.Or(fatal, refusal))
	if fatal != nil {
		return fatal
	}
	c.requests.Add(1)
	if refusal != nil {
		c.refused.Add(1)
	}
	if c.onRequest != nil {
		c.onRequest(*info)
	}
	return nil
}

func (c *core) disconnected(err error) {
	if c.onDisconnect != nil {
		c.onDisconnect(err)
	}
}

// handshake runs h on conn within timeout.
func handshake(ctx context.Context, h Handshake, conn net.Conn, timeout time.Duration) (net.Conn, ed25519.PublicKey, error) {
	if h == nil {
		return conn, nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_ = conn.SetDeadline(time.Now().Add(timeout))
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	sc, peer, err := h(ctx, conn)
	stop()
	if err != nil {
		return nil, nil, fmt.Errorf("privval: handshake: %w", err)
	}
	_ = conn.SetDeadline(time.Time{})
	return sc, peer, nil
}

// Defaults.
const (
	// DefaultRequestTimeout bounds the guard and signer on one request:
	// CometBFT and gno nodes wait 5 s for an answer.
	DefaultRequestTimeout = 5 * time.Second
	// DefaultWriteTimeout bounds the write of one response.
	DefaultWriteTimeout = 5 * time.Second
	// DefaultHandshakeTimeout bounds a Handshake.
	DefaultHandshakeTimeout = 10 * time.Second
	// DefaultIdleTimeout is how long an Endpoint waits for a request
	// before it drops the connection and dials again. CometBFT and gno
	// ping every 2/3 of their 5 s read/write timeout.
	DefaultIdleTimeout = 30 * time.Second
	// DefaultMinBackoff and DefaultMaxBackoff bound the wait between an
	// Endpoint's dials.
	DefaultMinBackoff = 100 * time.Millisecond
	DefaultMaxBackoff = 5 * time.Second
)
