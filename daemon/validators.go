package daemon

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync/atomic"

	"github.com/signerkit/signerkit/privval"
)

// validator is one [[chain.validator]] being served.
type validator struct {
	chain, addr      string
	network, address string
	protocol         string
	auth             atomic.Pointer[peerAuth] // TCP only; SIGHUP replaces it
	ep               *privval.Endpoint
	srv              *privval.Server
	ln               net.Listener
	conns            atomic.Int64 // open connections past their handshake
	admit            *admission   // tm2-remote listeners: caps, tarpit (limit.go)
	refusedLog       logLimit     // refused identities: a log line a second
	eofLog           logLimit     // identityHint: a log line a second
	dialLog          logLimit     // failed dials: a log line every 10 s
	// requests counts the requests answered; requestsAtConnect is its
	// value at the last connection, for identityHint.
	requests, requestsAtConnect atomic.Int64
}

// peerAuth is a TCP validator's SecretConnection handshake with its
// allowlist, made once and again on each reload, not per connection.
type peerAuth struct {
	allow []ed25519.PublicKey // nil: any
	h     privval.Handshake
}

// newValidator makes the validator vc of chain ch: its handshake, its
// metrics and logs, and its endpoint (a listener for tm2-remote, else a
// dialer), serving ch's key behind its guard.
func (d *Daemon) newValidator(ch ChainConfig, vc ValidatorConfig, pv parsedValidator) (*validator, error) {
	network, address := pv.network, pv.address
	v := &validator{chain: ch.ID, addr: vc.Addr, network: network, address: address, protocol: ch.Protocol,
		dialLog: logLimit{period: dialLogPeriod}}
	if network == "tcp" {
		v.auth.Store(d.peerAuth(v, pv.allow))
	}
	backend := d.keys[ch.Key]
	g := d.gs[ch.Key]
	log := d.log.With("chain", ch.ID, "validator", vc.Addr)
	countedRequest := d.onRequest(ch.ID, backend.scheme, log)
	onRequest := func(info privval.RequestInfo) { v.requests.Add(1); countedRequest(info) }
	onConnect := d.onConnect(v, log)
	onDisconnect := d.onDisconnect(v, log)
	hs := d.handshake(v, network)
	switch ch.Protocol {
	case ProtocolTM2Remote:
		v.admit = d.newAdmission(ch.ID, vc.Addr, network, log)
		s, err := privval.NewServer(g, privval.ServerConfig{Handshake: hs, ChainID: ch.ID, RequestTimeout: ch.SignTimeout,
			OnRequest: onRequest, OnConnect: onConnect, OnDisconnect: onDisconnect,
			Admit: v.admit.accept, OnAcceptError: v.admit.acceptError, Shed: v.admit.shed})
		if err != nil {
			return nil, fmt.Errorf("signerkit: chain %q: %w", ch.ID, err)
		}
		v.srv = s
		var ln net.Listener
		if network == "unix" {
			ln, err = listenUnix(address)
		} else {
			ln, err = net.Listen(network, address)
		}
		if err != nil {
			return nil, fmt.Errorf("signerkit: chain %q: listen on %s: %w", ch.ID, vc.Addr, err)
		}
		v.ln = ln
	default:
		e, err := privval.NewEndpoint(g, privval.Config{Dialect: ch.dialect(), Network: network, Address: address, Handshake: hs,
			ChainID: ch.ID, RequestTimeout: ch.SignTimeout, OnRequest: onRequest, OnConnect: onConnect, OnDisconnect: onDisconnect,
			MaxBackoff: d.cfg.redialMaxBackoff()})
		if err != nil {
			return nil, fmt.Errorf("signerkit: chain %q: %w", ch.ID, err)
		}
		v.ep = e
	}
	return v, nil
}

// onRequest returns a validator's OnRequest hook: each request counted
// and timed by phase, a sign's height, round and step made the chain's
// last, a refusal logged.
func (d *Daemon) onRequest(chain, scheme string, log *slog.Logger) func(privval.RequestInfo) {
	obs := d.m.observers(chain, scheme)
	lastH, lastR, lastS := d.m.lastHeight.WithLabelValues(chain), d.m.lastRound.WithLabelValues(chain), d.m.lastStep.WithLabelValues(chain)
	return func(info privval.RequestInfo) {
		o := obs[info.Label]
		if o == nil {
			o = obs[privval.LabelSign]
		}
		o.seconds.Observe(info.Duration.Seconds())
		switch {
		case info.Err == nil && info.Cached:
			o.cached.Inc()
		case info.Err == nil:
			o.signed.Inc()
			if step := info.Phase.Step(); step != 0 {
				// The guard has just made this the chain's state.
				lastH.Set(float64(info.Height))
				lastR.Set(float64(info.Round))
				lastS.Set(float64(step))
			}
		case isDoubleSign(info.Err):
			o.refused.Inc()
			o.dsr.Inc()
			log.Warn("double sign refused", "phase", info.Label, "height", info.Height, "round", info.Round, "err", info.Err)
		default:
			o.refused.Inc()
			log.Warn("request refused", "phase", info.Label, "height", info.Height, "round", info.Round, "err", info.Err)
		}
		if log.Enabled(context.Background(), slog.LevelDebug) {
			log.Debug("request", "phase", info.Label, "height", info.Height, "round", info.Round, "duration", info.Duration, "cached", info.Cached)
		}
	}
}

// onConnect returns v's OnConnect hook: a connection past its handshake
// counted and logged.
func (d *Daemon) onConnect(v *validator, log *slog.Logger) func(ed25519.PublicKey) {
	connected := d.m.connected.WithLabelValues(v.chain, v.addr)
	connects := d.m.connects.WithLabelValues(v.chain, v.addr)
	return func(peer ed25519.PublicKey) {
		v.requestsAtConnect.Store(v.requests.Load())
		v.conns.Add(1)
		connected.Set(float64(v.conns.Load()))
		connects.Inc()
		log.Info("validator connected", "peer", peerString(peer))
	}
}

// onDisconnect returns v's OnDisconnect hook: the connection uncounted
// (when it got past its handshake), its end counted by reason and logged,
// a refused identity at most once a second.
func (d *Daemon) onDisconnect(v *validator, log *slog.Logger) func(error) {
	connected := d.m.connected.WithLabelValues(v.chain, v.addr)
	return func(err error) {
		reason := disconnectReason(err)
		var he *handshakeError
		if !errors.As(err, &he) && reason != "dial" {
			if n := v.conns.Add(-1); n >= 0 {
				connected.Set(float64(n))
			} else {
				v.conns.Store(0)
			}
		}
		d.m.disconnects.WithLabelValues(v.chain, v.addr, reason).Inc()
		var ue *privval.UnauthorizedPeerError
		if errors.As(err, &ue) {
			// A refused gno node redials at once and for ever: a line a
			// second at most (validator_disconnects_total counts them all).
			if ok, quiet := v.refusedLog.allow(); ok {
				log.Warn("validator refused: its identity key is not on the allowlist", "peer", peerString(ue.Key), "fix", "add it to allow and send SIGHUP",
					"unlogged_since_last", quiet)
			}
		} else if reason == "dial" {
			// Redials come every redial_max_backoff while the node is
			// down: a line every 10 s.
			if ok, quiet := v.dialLog.allow(); ok {
				log.Info("validator not reachable; redialing", "err", err, "unlogged_since_last", quiet)
			}
		} else if reason != "shutdown" && reason != "shed" { // shed: counted, not logged (a flood)
			log.Info("validator connection ended", "reason", reason, "err", err)
			d.identityHint(v, err, reason, log)
		}
	}
}

func peerString(k ed25519.PublicKey) string {
	if k == nil {
		return "none"
	}
	return fmt.Sprintf("ed25519:%x", []byte(k))
}

// peerAuth makes v's SecretConnection handshake (tm2's pre-Merlin form
// for tm2-remote) accepting the peers of allow (nil: any).
func (d *Daemon) peerAuth(v *validator, allow []ed25519.PublicKey) *peerAuth {
	if v.protocol == ProtocolTM2Remote {
		return &peerAuth{allow: allow, h: privval.LegacySecretConnection(d.id, allow)}
	}
	return &peerAuth{allow: allow, h: privval.SecretConnection(d.id, allow)}
}

// handshake returns v's Handshake: on TCP v's SecretConnection as it is
// at each connection (SIGHUP replaces it, applying to the next one),
// under the listener's admission (caps, tarpit: limit.go) for a
// listener; on Unix sockets none.
func (d *Daemon) handshake(v *validator, network string) privval.Handshake {
	if network != "tcp" {
		return func(_ context.Context, conn net.Conn) (net.Conn, ed25519.PublicKey, error) { return conn, nil, nil }
	}
	return func(ctx context.Context, conn net.Conn) (net.Conn, ed25519.PublicKey, error) {
		if v.admit != nil {
			return v.admit.handshake(ctx, conn, v.auth.Load().h)
		}
		sc, peer, err := v.auth.Load().h(ctx, conn)
		if err != nil {
			return nil, peer, &handshakeError{err}
		}
		return sc, peer, nil
	}
}

// handshakeError marks a connection that ended in its handshake.
type handshakeError struct{ err error }

func (e *handshakeError) Error() string { return e.err.Error() }
func (e *handshakeError) Unwrap() error { return e.err }

func remoteHost(conn net.Conn) string {
	a := conn.RemoteAddr()
	if a == nil {
		return ""
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}
