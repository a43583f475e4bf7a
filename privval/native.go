package privval

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/internal/backoff"
	"github.com/signerkit/signerkit/signbytes"
)

// MaxNativeFrame is the largest message of gno's native remote-signer
// protocol (tm2/pkg/bft/privval/signer/remote.MaxMessageSize, 1 MiB).
const MaxNativeFrame = 1 << 20

// Amino names of the native protocol's messages (package tm.remotesigner)
// and of tm2's Ed25519 public key.
const (
	typePubKeyRequest  = "/tm.remotesigner.PubKeyRequest"
	typePubKeyResponse = "/tm.remotesigner.PubKeyResponse"
	typeSignRequest    = "/tm.remotesigner.SignRequest"
	typeSignResponse   = "/tm.remotesigner.SignResponse"
	typePubKeyEd25519  = "/tm.PubKeyEd25519"
)

// nativeRequest is a decoded request of the native protocol.
type nativeRequest struct {
	pubKey    bool   // a PubKeyRequest; else a SignRequest
	signBytes []byte // aliases the frame
}

// decodeAny reads an amino google.protobuf.Any: the type URL (field 1)
// and the value (field 2), each at most once and in that order, as amino
// writes them.
func decodeAny(b []byte) (typeURL string, value []byte, err error) {
	seen := 0
	err = fields(b, func(f field) error {
		if f.num <= seen || f.num > 2 {
			return wireErr(f.off, "field %d in an Any", f.num)
		}
		seen = f.num
		v, err := f.bytes()
		if err != nil {
			return err
		}
		if f.num == 1 {
			if !utf8.Valid(v) {
				return wireErr(f.off, "type URL is not UTF-8")
			}
			typeURL = string(v)
		} else {
			value = v
		}
		return nil
	})
	if err == nil && seen == 0 {
		err = wireErr(0, "Any without a type URL")
	}
	return typeURL, value, err
}

// decodeNativeRequest decodes one request frame of gno's native protocol.
func decodeNativeRequest(b []byte) (nativeRequest, error) {
	url, value, err := decodeAny(b)
	if err != nil {
		return nativeRequest{}, asProtocolError(err)
	}
	switch url {
	case typePubKeyRequest:
		if len(value) != 0 {
			return nativeRequest{}, protoErr("PubKeyRequest with %d bytes of content", len(value))
		}
		return nativeRequest{pubKey: true}, nil
	case typeSignRequest:
		var req nativeRequest
		n := 0
		err := fields(value, func(f field) error {
			if f.num != 1 || n > 0 {
				return wireErr(f.off, "field %d in a SignRequest", f.num)
			}
			n++
			req.signBytes, err = f.bytes()
			return err
		})
		if err != nil {
			return nativeRequest{}, asProtocolError(err)
		}
		return req, nil
	case typePubKeyResponse, typeSignResponse:
		return nativeRequest{}, protoErr("a response (%s) where a request was expected", url)
	}
	return nativeRequest{}, &ProtocolError{Reason: fmt.Sprintf("unknown message type %q", url), Unknown: true}
}

func (e *enc) any(typeURL string, value func(*enc)) {
	e.string(1, typeURL)
	var v enc
	value(&v)
	e.bytes(2, v.b)
}

// appendNativePubKeyResponse appends PubKeyResponse{PubKey: Ed25519 pub}.
func appendNativePubKeyResponse(dst, pub []byte) []byte {
	e := enc{b: dst}
	e.any(typePubKeyResponse, func(v *enc) {
		v.message(1, func(k *enc) {
			k.any(typePubKeyEd25519, func(kv *enc) { kv.bytes(1, pub) })
		})
	})
	return e.b
}

// appendNativeSignResponse appends SignResponse{Signature} or, when
// refusal is not nil, SignResponse{Error: {Err: refusal}}.
func appendNativeSignResponse(dst, sig []byte, refusal error) []byte {
	e := enc{b: dst}
	e.any(typeSignResponse, func(v *enc) {
		if refusal != nil {
			v.message(2, func(r *enc) { r.string(1, refusal.Error()) })
			return
		}
		v.bytes(1, sig)
	})
	return e.b
}

// ServerConfig configures a Server.
type ServerConfig struct {
	// Handshake secures each accepted connection (tm2's SecretConnection
	// and its authorized keys, on TCP). Nil serves connections as they
	// are, which is right for Unix sockets.
	Handshake Handshake

	// ChainID, when set, is the only chain the Server signs for.
	ChainID string

	// IdleTimeout, when set, drops a connection that sends no request
	// for that long. gno's client sends none between signs, and keeps
	// TCP connections alive with TCP keep-alives, so the default is none.
	IdleTimeout time.Duration
	// WriteTimeout, RequestTimeout and HandshakeTimeout: zero means the
	// Default of the same name.
	WriteTimeout, RequestTimeout, HandshakeTimeout time.Duration

	// OnRequest, if set, is called after each request is answered.
	OnRequest func(RequestInfo)
	// OnDisconnect, if set, is called with the reason each connection
	// ended: a *ProtocolError for a garbled frame, io.EOF when the node
	// closed it, a net error, a handshake error.
	OnDisconnect func(error)
	// OnConnect, if set, is called when a connection has completed its
	// Handshake, with the node's identity key (nil without one).
	OnConnect func(peer ed25519.PublicKey)

	// Admit, if set, is called in the accept loop with each connection
	// accepted, before its goroutine starts: it returns the connection to
	// serve (conn, or a wrapper of it), or nil when it closed conn, which
	// is then dropped. It must not block.
	Admit func(conn net.Conn) net.Conn
	// OnAcceptError, if set, is called when the listener's Accept fails
	// with a TemporaryAcceptError, with the error and how long Serve
	// waits before it accepts again.
	OnAcceptError func(err error, wait time.Duration)
	// Shed, if set, is called when Accept fails for want of a file
	// descriptor (OutOfDescriptors). It may close one connection of its
	// choosing — one still in its handshake, say — and reports whether
	// it did; Serve then waits MinAcceptBackoff instead of a doubled
	// backoff, since a descriptor is being freed.
	Shed func() bool
}

// Server is the signer side of gno's native remote-signer protocol
// (tm2/pkg/bft/privval/signer/remote, which gnokms served): the node
// dials it and sends amino PubKeyRequest and SignRequest messages, which
// the Server answers through a guard.Guard. The node keeps its own
// double-sign state; the guard's protects against a second node signing
// with the same key. A Server serves any number of connections at once.
type Server struct {
	*core
	cfg ServerConfig
}

// NewServer returns a Server that signs through g. The guard's key must be
// Ed25519.
func NewServer(g *guard.Guard, cfg ServerConfig) (*Server, error) {
	c, err := newCore(g, cfg.ChainID, cfg.RequestTimeout, cfg.OnRequest, cfg.OnDisconnect, cfg.OnConnect)
	if err != nil {
		return nil, err
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = DefaultHandshakeTimeout
	}
	return &Server{core: c, cfg: cfg}, nil
}

// Stats returns the Server's counters and per-phase latencies.
func (s *Server) Stats() Stats { return s.stats() }

// Serve accepts connections on ln and serves them until ctx ends. It then
// closes ln and every connection, waits for their goroutines to finish and
// returns ctx's error, or ErrShutdown after Shutdown, which also ends the
// handshakes in progress at once.
//
// A TemporaryAcceptError — out of file descriptors (a connection flood),
// a connection aborted before it was accepted — never ends Serve: it
// waits MinAcceptBackoff, doubling with each further error in a row up to
// MaxAcceptBackoff (as net/http's Server.Serve does), and accepts again;
// ServerConfig.OnAcceptError and Shed are told. Any other Accept error
// (ln closed by the caller, for one) ends Serve with that error.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if err := s.drain.enter(); err != nil {
		_ = ln.Close()
		return err
	}
	defer s.drain.leave()
	stop := context.AfterFunc(ctx, func() { _ = ln.Close() })
	defer stop()
	// hctx is the handshakes' context: Shutdown ends them, as it ends
	// nothing past its handshake but an idle read.
	hctx, hcancel := context.WithCancel(ctx)
	defer hcancel()
	stopping := make(chan struct{})
	defer close(stopping)
	go func() {
		select {
		case <-s.drain.stopping:
			_ = ln.Close()
			hcancel()
		case <-stopping:
		}
	}()
	var wg sync.WaitGroup
	defer wg.Wait()
	wait := acceptBackoff()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if s.drain.isDraining() {
				return ErrShutdown
			}
			if !TemporaryAcceptError(err) {
				_ = ln.Close()
				return fmt.Errorf("privval: accept: %w", err)
			}
			if OutOfDescriptors(err) && s.cfg.Shed != nil && s.cfg.Shed() {
				wait.Reset()
			}
			delay := wait.Next()
			if s.cfg.OnAcceptError != nil {
				s.cfg.OnAcceptError(err, delay)
			}
			backoff.SleepUntil(ctx, s.drain.stopping, delay)
			continue
		}
		wait.Reset()
		if s.cfg.Admit != nil {
			if conn = s.cfg.Admit(conn); conn == nil {
				continue
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.disconnected(s.serveConn(ctx, hctx, conn))
		}()
	}
}

// serveConn serves conn until ctx ends; hctx bounds its handshake.
func (s *Server) serveConn(ctx, hctx context.Context, conn net.Conn) error {
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	defer conn.Close()
	sc, peer, err := handshake(hctx, s.cfg.Handshake, conn, s.cfg.HandshakeTimeout)
	if err != nil {
		if s.drain.isDraining() {
			return ErrShutdown
		}
		return err
	}
	if sc != conn {
		defer sc.Close()
	}
	st, ok := s.drain.add(sc)
	if !ok {
		return ErrShutdown
	}
	defer s.drain.remove(st)
	s.connected(peer)
	br := bufio.NewReaderSize(sc, 4096)
	var in, msg, out []byte
	for {
		deadline := time.Time{}
		if s.cfg.IdleTimeout > 0 {
			deadline = time.Now().Add(s.cfg.IdleTimeout)
		}
		if ok, err := s.drain.idle(st, deadline); !ok {
			return ErrShutdown
		} else if err != nil {
			return err
		}
		frame, err := readFrame(br, MaxNativeFrame, in)
		if err != nil {
			if s.drain.isDraining() {
				return ErrShutdown
			}
			var pe *ProtocolError
			if errors.As(err, &pe) {
				s.protocolError.Add(1)
			}
			return err
		}
		in = frame
		s.drain.busy(st)
		req, err := decodeNativeRequest(frame)
		if err != nil {
			s.protocolError.Add(1)
			return err
		}
		info := RequestInfo{Label: LabelPubKey, Peer: peer}
		var sr guard.Request
		var parseErr error
		if !req.pubKey {
			info.Label = LabelSign
			if sr, parseErr = s.g.ParseRequest(req.signBytes); parseErr == nil {
				m := sr.Message()
				info.Phase, info.ChainID, info.Height, info.Round = m.Phase.Vote(), m.ChainID, m.Height, m.Round
				info.Label = info.Phase.String()
			}
		}
		err = s.serveOne(ctx, &info, func(ctx context.Context, info *RequestInfo) (error, error) {
			var refusal error
			if req.pubKey {
				msg = appendNativePubKeyResponse(msg[:0], s.pub)
			} else {
				var sig []byte
				sig, refusal = s.sign(ctx, &sr, parseErr, info)
				msg = appendNativeSignResponse(msg[:0], sig, refusal)
			}
			out = appendFrame(out[:0], msg)
			return refusal, writeFrame(sc, out, s.cfg.WriteTimeout)
		})
		if err != nil {
			return err
		}
	}
}

func (s *Server) sign(ctx context.Context, sr *guard.Request, parseErr error, info *RequestInfo) ([]byte, error) {
	if parseErr != nil {
		return nil, parseErr
	}
	if s.chainID != "" && info.ChainID != s.chainID {
		return nil, invalidRequest("chain id %q, this signer serves %q", info.ChainID, s.chainID)
	}
	r, err := s.g.SignRequest(ctx, sr)
	if err != nil {
		return nil, err
	}
	info.Cached, info.TimestampChanged = r.Cached, r.TimestampChanged
	if r.TimestampChanged {
		// The protocol cannot carry the earlier timestamp back.
		m, _ := signbytes.Parse(r.SignBytes)
		return nil, &guard.TimestampError{ChainID: m.ChainID, Height: m.Height, Round: m.Round, Step: m.Step(),
			Timestamp: r.Timestamp, SignBytes: r.SignBytes, Signature: r.Signature}
	}
	return r.Signature, nil
}
