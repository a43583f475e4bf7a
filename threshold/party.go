package threshold

import (
	"bufio"
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/threshold/frost"
)

// maxInflightPerConn bounds the requests a party serves at once on one
// connection; further frames wait in TCP's buffers.
const maxInflightPerConn = 512

// maxPendingHandshakes bounds the connections a party holds in their TLS
// handshake at once (each for up to handshakeTimeout); a connection
// accepted beyond it is closed at once, so that idle sockets cannot pile
// up goroutines and file descriptors.
const (
	maxPendingHandshakes = 64
	handshakeTimeout     = 10 * time.Second
)

// PartyConfig configures a Party.
type PartyConfig struct {
	// Key is the party's share of the group key.
	Key *frost.KeyPackage
	// Nonces is the party's nonce store, opened for Key (with guard.DirFS
	// for durability; a guard.MemFS store is not crash-safe). The Party
	// does not close it.
	Nonces *frost.NonceStore
	// TLS is the server's TLS configuration: its certificate, and the CA
	// pool (ClientCAs) or a VerifyPeerCertificate callback that admits
	// coordinators. The Party requires TLS 1.3 and a client certificate
	// whatever the configuration says; GetConfigForClient, which would
	// bypass that, is refused.
	TLS *tls.Config
	// Coordinators are the coordinators the party serves; required. An
	// entry is either a DNS name, which the client certificate must be
	// valid for (and not also for server authentication: a party's
	// certificate, such as RunDKG's, is never taken for a coordinator's),
	// or "sha256:" and the hex SHA-256 of the certificate's
	// SubjectPublicKeyInfo (see SPKIHash). A client certificate that
	// chains to ClientCAs but matches no entry is refused, so another
	// party holding a certificate from the same CA cannot act as a
	// coordinator. Coordinators should have their own CA, or at least
	// names no party's certificate carries.
	Coordinators []string
	// Guard, when set, puts a double-sign guard in front of the share:
	// the party reads every message as consensus sign bytes and refuses
	// what a CometBFT FilePV would refuse (package guard), before it
	// touches a nonce. Its state is the party's own. Nil means no guard.
	// The same message again is signed again (with fresh nonces: a share
	// is never replayed); a vote that differs from the one signed only in
	// its timestamp is refused with signer.ErrDoubleSign, since a party
	// holds no whole signature to hand back. A guard.Guard in front of
	// the coordinator's Signer handles that case as for any signer.
	Guard *guard.Config
	// Log, when set, gets a line for each sign request the party refuses
	// (at Warn; a pair used or released already at Info). Nil logs
	// nothing.
	Log *slog.Logger
	// MaxPresignBatch caps the nonce pairs made per presign request; 0
	// means 1024.
	MaxPresignBatch int
	// ReclaimAfter is the age after which the party may discard a fresh
	// nonce pair whose commitments it handed out (or loaded from its file)
	// and which was neither used nor released: when a presign finds the
	// nonce store full, such pairs are marked consumed, durably, and
	// their slots reused. That reclaims pairs whose presign answer was
	// lost; a coordinator that still holds one gets ErrNonceUsed once and
	// signs with another party. 0 means one hour; negative never.
	ReclaimAfter time.Duration
}

// Party is one participant of a threshold key, serving signature shares to
// coordinators over mutual TLS 1.3. It is safe for concurrent use: it
// serves any number of connections and requests at once.
type Party struct {
	key    *frost.KeyPackage
	nonces *frost.NonceStore
	tls    *tls.Config
	guard  *guard.Guard
	batch  int
	age    time.Duration // ReclaimAfter; negative never
	log    *slog.Logger

	c      counters
	stats  partyStats
	owners nonceOwners
	// handler, when set, serves every request instead of handle: a
	// DKLS23Party serves through the same listener and TLS machinery.
	handler func(frame, coordinatorID) frame

	mu        sync.Mutex
	listeners map[net.Listener]bool
	conns     map[net.Conn]bool
	closed    bool
	wg        sync.WaitGroup
	pending   chan struct{} // one per connection in its handshake
}

// NewParty returns a Party for cfg. It does not listen: call Serve.
func NewParty(cfg PartyConfig) (*Party, error) {
	if cfg.Key == nil || cfg.Nonces == nil {
		return nil, fmt.Errorf("threshold: PartyConfig needs Key and Nonces: %w", signer.ErrInvalidArgument)
	}
	t, err := serverTLS(cfg.TLS, cfg.Coordinators, "PartyConfig")
	if err != nil {
		return nil, err
	}
	p := &Party{key: cfg.Key, nonces: cfg.Nonces, tls: t, batch: cfg.MaxPresignBatch, age: cfg.ReclaimAfter,
		listeners: map[net.Listener]bool{}, conns: map[net.Conn]bool{}, pending: make(chan struct{}, maxPendingHandshakes)}
	if p.batch <= 0 || p.batch > maxPresignBatch {
		p.batch = maxPresignBatch
	}
	if p.age == 0 {
		p.age = time.Hour
	}
	if p.log = cfg.Log; p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if cfg.Guard != nil {
		g, err := guard.New(&admission{pub: cfg.Key.GroupPublicKey()}, *cfg.Guard)
		if err != nil {
			return nil, err
		}
		p.guard = g
	}
	return p, nil
}

// ID returns the party's identifier.
func (p *Party) ID() frost.Identifier { return p.key.ID() }

// Counters returns the bytes the party has sent and received on all its
// connections.
func (p *Party) Counters() Counters { return p.c.snapshot() }

// Serve accepts connections on l and serves them until l fails or the
// Party is closed. l may be any net.Listener (a network shaper's, say);
// Serve adds TLS itself. It returns nil after Close.
func (p *Party) Serve(l net.Listener) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		l.Close()
		return fmt.Errorf("threshold: party: %w", signer.ErrClosed)
	}
	p.listeners[l] = true
	p.mu.Unlock()
	for {
		raw, err := l.Accept()
		if err != nil {
			p.mu.Lock()
			closed := p.closed
			delete(p.listeners, l)
			p.mu.Unlock()
			if closed {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return err
		}
		select {
		case p.pending <- struct{}{}:
		default:
			raw.Close() // too many handshakes pending
			continue
		}
		conn := tls.Server(&countingConn{Conn: raw, c: &p.c}, p.tls)
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			<-p.pending
			raw.Close()
			return nil
		}
		p.conns[conn] = true
		p.wg.Add(1)
		p.mu.Unlock()
		go p.serveConn(conn)
	}
}

func (p *Party) serveConn(conn *tls.Conn) {
	defer p.wg.Done()
	defer func() {
		conn.Close()
		p.mu.Lock()
		delete(p.conns, conn)
		p.mu.Unlock()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), handshakeTimeout)
	err := conn.HandshakeContext(ctx)
	cancel()
	<-p.pending
	if err != nil {
		return
	}
	owner := peerID(conn.ConnectionState())
	r := bufio.NewReaderSize(conn, 16<<10)
	w := newFrameWriter(conn)
	var inflight sync.WaitGroup
	defer inflight.Wait()
	sem := make(chan struct{}, maxInflightPerConn)
	for {
		f, err := readFrame(r)
		if err != nil {
			return
		}
		p.c.frames.Add(1)
		p.c.payloadIn.Add(uint64(len(f.body)))
		sem <- struct{}{}
		inflight.Add(1)
		go func() {
			defer func() { <-sem; inflight.Done() }()
			resp := p.handle(f, owner)
			if w.write(resp) == nil {
				p.c.frames.Add(1)
				p.c.payloadOut.Add(uint64(len(resp.body)))
			}
		}()
	}
}

func errorFrame(id uint32, code byte, err error) frame {
	return frame{typ: typeError, id: id, body: encodeError(code, err.Error())}
}

func (p *Party) handle(f frame, owner coordinatorID) frame {
	if p.handler != nil {
		return p.handler(f, owner)
	}
	switch f.typ {
	case typePresign:
		req, err := parsePresignRequest(f.body)
		if err != nil {
			return errorFrame(f.id, codeInvalid, err)
		}
		out, err := p.presign(req, owner)
		if err != nil {
			return errorFrame(f.id, codeUnavailable, err)
		}
		p.stats.presigned.Add(uint64(len(out)))
		body, err := encodePresigned(out)
		if err != nil {
			return errorFrame(f.id, codeUnavailable, err)
		}
		return frame{typ: typePresigned, id: f.id, body: body}
	case typeRelease:
		hs, err := parseRelease(f.body)
		if err != nil {
			return errorFrame(f.id, codeInvalid, err)
		}
		n, err := p.nonces.Release(hs...)
		if err != nil {
			return errorFrame(f.id, codeUnavailable, err)
		}
		return frame{typ: typeReleased, id: f.id, body: binary.BigEndian.AppendUint16(nil, uint16(n))}
	case typeSign:
		req, err := parseSignRequest(f.body)
		if err != nil {
			return errorFrame(f.id, codeInvalid, err)
		}
		z, code, err := p.sign(req)
		p.stats.noteSign(code, err)
		if err != nil {
			level := slog.LevelWarn
			if code == codeNonceUsed {
				level = slog.LevelInfo
			}
			p.log.Log(context.Background(), level, "sign request refused", "party", uint16(p.key.ID()), "err", err)
			return errorFrame(f.id, code, err)
		}
		return frame{typ: typeShare, id: f.id, body: z}
	}
	return errorFrame(f.id, codeInvalid, &ProtocolError{fmt.Sprintf("unknown request type %d", f.typ)})
}

// presign serves a presign request: the outstanding pairs first if asked,
// those of this coordinator (owner) or of none (at most maxPresignBatch,
// what one answer carries; the rest, which this answer cannot hand out
// and would strand, are released), then new ones, recorded as owner's.
// A full nonce store first reclaims pairs older than ReclaimAfter, then
// answers with its *frost.NonceStoreFullError.
func (p *Party) presign(req presignRequest, owner coordinatorID) ([]frost.Presigned, error) {
	want := min(int(req.count), p.batch)
	var out []frost.Presigned
	if req.flags&presignOutstanding != 0 {
		out = p.owners.owned(owner, p.nonces.Outstanding())
		if len(out) > maxPresignBatch {
			var extra []frost.NonceHandle
			for _, ps := range out[maxPresignBatch:] {
				extra = append(extra, ps.Handle)
			}
			out = out[:maxPresignBatch]
			if _, err := p.nonces.Release(extra...); err != nil {
				return nil, err
			}
		}
	}
	if n := want - len(out); n > 0 {
		made, err := p.nonces.Generate(n)
		var full *frost.NonceStoreFullError
		if errors.As(err, &full) && p.age >= 0 {
			if k, rerr := p.nonces.ReleaseOlderThan(p.age); rerr != nil {
				return nil, rerr
			} else if k > 0 {
				made, err = p.nonces.Generate(n)
			}
		}
		if err != nil {
			if len(out) > 0 && errors.As(err, &full) {
				return out, nil
			}
			return nil, err
		}
		p.owners.give(owner, made, p.nonces)
		out = append(out, made...)
	}
	return out, nil
}

// NonceStats returns the slot counts of the party's nonce store: free
// slots, fresh pairs outstanding, capacity.
func (p *Party) NonceStats() frost.NonceStats { return p.nonces.Stats() }

// sign serves a sign request: the guard first, then the nonce store,
// which marks the nonce consumed durably before computing the share.
func (p *Party) sign(req signRequest) ([]byte, byte, error) {
	if len(req.msg) > MaxMessage {
		return nil, codeTooLarge, fmt.Errorf("threshold: %d-byte message: %w", len(req.msg), signer.ErrMessageTooLarge)
	}
	for _, c := range req.others {
		if c.ID == p.key.ID() {
			return nil, codeInvalid, &ProtocolError{"a sign request lists this party as another signer"}
		}
	}
	var gate func() error
	var refused byte
	var gateErr error
	if p.guard != nil {
		// The guard records the message while the nonce store syncs the
		// pair's consumed mark and computes the share: the share leaves
		// only once both are durable, one sync's time after the request
		// rather than two. The store refuses a handle unknown or used
		// before the gate runs, so the guard records nothing for it; a
		// refusal by the guard costs the pair, as a share request that
		// failed on the way does.
		gate = func() error {
			refused, gateErr = p.guardShare(req.msg)
			return gateErr
		}
	}
	// The party's own commitments are the nonce pair's: the store puts
	// them in their place in the list, looking the pair up once.
	share, err := p.nonces.SignAmongGated(req.handle, req.msg, req.others, gate)
	switch {
	case gateErr != nil && err == gateErr:
		return nil, refused, err
	case errors.Is(err, frost.ErrNonceUsed):
		return nil, codeNonceUsed, err
	case errors.Is(err, signer.ErrInvalidArgument):
		return nil, codeInvalid, err
	case err != nil:
		return nil, codeUnavailable, err
	}
	return share.Z.Bytes(), 0, nil
}

// Close stops serving: it closes the listeners and connections and waits
// for requests in flight. It does not close the nonce store.
func (p *Party) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	for l := range p.listeners {
		l.Close()
	}
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	if p.guard != nil {
		return p.guard.Close()
	}
	return nil
}

// admission is the signer a party's guard wraps. The guard only decides
// whether the party may sign a message; a party never holds a whole
// signature, so the guard's state records 64 zero bytes in the signature's
// place, and the party computes a share for every message the guard
// admits (a fresh one each time: a share is never replayed from the
// state, since it belongs to one commitment list).
type admission struct{ pub ed25519.PublicKey }

func (a *admission) Public() crypto.PublicKey { return a.pub }
func (a *admission) Sign(io.Reader, []byte, crypto.SignerOpts) ([]byte, error) {
	return make([]byte, ed25519.SignatureSize), nil
}
func (a *admission) SignContext(context.Context, []byte) ([]byte, error) {
	return make([]byte, ed25519.SignatureSize), nil
}
func (a *admission) Close() error { return nil }
