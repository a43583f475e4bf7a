package threshold

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha512"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/signerkit/signerkit/internal/backoff"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/threshold/frost"
)

// DKGConfig configures one participant of a key generation over the
// network (RunDKG).
type DKGConfig struct {
	ID   frost.Identifier
	T, N int
	// Ceremony identifies this key generation: 1 to frost.MaxCeremonyID
	// bytes, the same for every participant and never used for another
	// (random bytes agreed beforehand, say). It is bound into the proofs
	// of knowledge with T and N, so a round-1 package from another
	// ceremony is refused.
	Ceremony []byte
	// Peers are the other N-1 participants. A peer's certificate must be
	// valid for its ServerName (or the host of its Addr): that is how a
	// connection is tied to an identifier, in both directions.
	Peers []Remote
	// Listener is where this participant accepts the peers with lower
	// identifiers; it dials those with higher ones.
	Listener net.Listener
	// TLS holds this participant's certificate, usable for both client
	// and server authentication, and the CA pool of the peers' (RootCAs,
	// required; it is also used as ClientCAs). TLS 1.3 is required;
	// InsecureSkipVerify and GetConfigForClient are refused. These
	// certificates must not come from the CA the parties admit
	// coordinators with, or must carry names no Coordinators entry
	// matches: a certificate good for both ends is never admitted by name
	// as a coordinator's (PartyConfig.Coordinators).
	TLS *tls.Config
	// Dial makes the raw connections; nil means a net.Dialer.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Frame types of the key generation, between participants.
const (
	typeDKGHello  byte = 16 // dialer's identifier (2)
	typeDKGRound1 byte = 17 // frost round-1 package
	typeDKGEcho   byte = 18 // SHA-512 of every round-1 package, by identifier
	typeDKGRound2 byte = 19 // frost round-2 package
)

// RunDKG runs this participant's part of a t-of-n distributed key
// generation (frost's DKG with proofs of knowledge) with its peers, over
// mutual TLS 1.3 connections between each pair: every participant sends
// its round-1 package to every other, then a hash of all the round-1
// packages it holds, so that all are known to have seen the same ones (a
// broadcast without a broadcast channel), then each its secret share over
// their pairwise connection. It returns the participant's key package and
// the group's public key package, or an error; a participant that sends a
// bad proof or share is named in a *frost.DKGError. All participants must
// call RunDKG at about the same time; it retries dialing until ctx ends,
// and closes cfg.Listener once every peer is connected.
func RunDKG(ctx context.Context, cfg DKGConfig) (*frost.KeyPackage, *frost.PublicKeyPackage, error) {
	if err := checkDKGConfig(cfg); err != nil {
		return nil, nil, err
	}
	d, own, err := frost.NewDKGSession(cfg.ID, cfg.T, cfg.N, cfg.Ceremony, rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	ownEnc, err := own.AppendBinary(nil)
	if err != nil {
		return nil, nil, err
	}
	peers, closePeers, err := openDKGPeers(ctx, cfg)
	defer closePeers()
	if err != nil {
		return nil, nil, err
	}
	r1, others, err := dkgRound1(peers, cfg.ID, ownEnc)
	if err != nil {
		return nil, nil, err
	}
	if err := dkgEcho(peers, r1); err != nil {
		return nil, nil, err
	}
	received, err := dkgRound2(d, peers, others)
	if err != nil {
		return nil, nil, err
	}
	return d.Finish(received)
}

// openDKGPeers connects to every one of cfg's peers (connectDKGPeers)
// and returns them by identifier, with a function that closes the
// connections made, however far it got (to be called even on an error).
// Key generations of either scheme run over these connections.
func openDKGPeers(ctx context.Context, cfg DKGConfig) (map[frost.Identifier]*dkgPeer, func(), error) {
	peers, err := dkgPeers(cfg)
	if err != nil {
		return nil, func() {}, err
	}
	closePeers := func() {
		for _, p := range peers {
			if p.c != nil {
				p.c.Close()
			}
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	return peers, closePeers, connectDKGPeers(ctx, cancel, cfg, peers)
}

// checkDKGConfig refuses a config without TLS, a listener and N-1 peers,
// and one whose TLS would not verify the peers' certificates against the
// participants' CA.
func checkDKGConfig(cfg DKGConfig) error {
	if cfg.TLS == nil || cfg.Listener == nil || len(cfg.Peers) != cfg.N-1 {
		return fmt.Errorf("threshold: DKGConfig needs TLS, Listener and N-1 peers: %w", signer.ErrInvalidArgument)
	}
	// A peer is known by the name its certificate is verified for, so
	// the chain must be verified against the participants' CA: not the
	// system roots (RootCAs nil), not skipped, and not bypassed by a
	// per-client config.
	switch {
	case cfg.TLS.RootCAs == nil:
		return fmt.Errorf("threshold: DKGConfig.TLS.RootCAs is nil (Go would trust the system roots): %w", signer.ErrInvalidArgument)
	case cfg.TLS.InsecureSkipVerify:
		return fmt.Errorf("threshold: DKGConfig.TLS.InsecureSkipVerify is set: peers are known by their verified certificates: %w", signer.ErrInvalidArgument)
	case cfg.TLS.GetConfigForClient != nil:
		return fmt.Errorf("threshold: DKGConfig.TLS.GetConfigForClient is not supported (it would bypass the forced settings): %w", signer.ErrInvalidArgument)
	}
	return nil
}

// dkgPeers returns cfg's peers by identifier, each with the name its
// certificate must carry, refusing a repeated one or this participant.
func dkgPeers(cfg DKGConfig) (map[frost.Identifier]*dkgPeer, error) {
	peers := map[frost.Identifier]*dkgPeer{}
	for _, p := range cfg.Peers {
		name := p.ServerName
		if name == "" {
			name, _, _ = net.SplitHostPort(p.Addr)
		}
		if p.ID == cfg.ID || peers[p.ID] != nil || p.ID == 0 {
			return nil, fmt.Errorf("threshold: DKG peer %d repeated or this participant: %w", p.ID, signer.ErrInvalidArgument)
		}
		peers[p.ID] = &dkgPeer{Remote: p, name: name, conn: make(chan peerConn, 1)}
	}
	return peers, nil
}

// connectDKGPeers connects to every peer, accepting the lower identifiers
// and dialing the higher ones, then stops listening (cancel ends the
// accepting and dialing) and puts ctx's deadline on every connection.
func connectDKGPeers(ctx context.Context, cancel context.CancelFunc, cfg DKGConfig, peers map[frost.Identifier]*dkgPeer) error {
	dial := cfg.Dial
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	var wg sync.WaitGroup
	errs := make(chan error, cfg.N+1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := acceptPeers(ctx, cfg, peers); err != nil {
			errs <- err
		}
	}()
	for _, p := range peers {
		if p.ID > cfg.ID {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := dialPeer(ctx, cfg, dial, p); err != nil {
					errs <- err
				}
			}()
		}
	}
	stop := func() {
		cancel()
		cfg.Listener.Close()
		wg.Wait()
	}
	for _, p := range peers {
		select {
		case pc := <-p.conn:
			p.c, p.r = pc.c, pc.r
			p.w = newFrameWriter(pc.c)
		case err := <-errs:
			stop()
			return err
		case <-ctx.Done():
			stop()
			return fmt.Errorf("threshold: DKG: waiting for participant %d: %w", p.ID, ctx.Err())
		}
	}
	stop() // every connection is up: stop listening
	if dl, ok := ctx.Deadline(); ok {
		for _, p := range peers {
			p.c.SetDeadline(dl)
		}
	}
	return nil
}

// dkgRound1 sends this participant's round-1 package (ownEnc) to every
// peer and returns every participant's, encoded by identifier, with the
// peers' parsed.
func dkgRound1(peers map[frost.Identifier]*dkgPeer, id frost.Identifier, ownEnc []byte) (map[frost.Identifier][]byte, []*frost.DKGRound1, error) {
	r1 := map[frost.Identifier][]byte{id: ownEnc}
	var others []*frost.DKGRound1
	for _, p := range sortedPeers(peers) {
		b, err := p.exchange(typeDKGRound1, ownEnc)
		if err != nil {
			return nil, nil, err
		}
		pkg, err := frost.ParseDKGRound1(b)
		if err != nil {
			return nil, nil, &frost.DKGError{Culprit: p.ID, Round: 1, Reason: err.Error()}
		}
		if pkg.ID != p.ID {
			return nil, nil, &frost.DKGError{Culprit: p.ID, Round: 1, Reason: fmt.Sprintf("sent a package for participant %d", pkg.ID)}
		}
		r1[p.ID] = b
		others = append(others, pkg)
	}
	return r1, others, nil
}

// dkgEcho exchanges a hash of the round-1 packages r1 with every peer:
// everyone must hold the same ones.
func dkgEcho(peers map[frost.Identifier]*dkgPeer, r1 map[frost.Identifier][]byte) error {
	h := sha512.New()
	for _, id := range sortIDs(mapsKeys(r1)) {
		h.Write(binary.BigEndian.AppendUint32(nil, uint32(len(r1[id]))))
		h.Write(r1[id])
	}
	echo := h.Sum(nil)
	for _, p := range sortedPeers(peers) {
		b, err := p.exchange(typeDKGEcho, echo)
		if err != nil {
			return err
		}
		if !bytes.Equal(b, echo) {
			return &frost.DKGError{Culprit: p.ID, Round: 1, Reason: "it holds other round-1 packages than this participant (a participant sent different packages to different peers)"}
		}
	}
	return nil
}

// dkgRound2 sends each peer its secret share and returns the shares the
// peers sent, wiping the encodings.
func dkgRound2(d *frost.DKG, peers map[frost.Identifier]*dkgPeer, others []*frost.DKGRound1) ([]*frost.DKGRound2, error) {
	out, err := d.Round2(others)
	if err != nil {
		return nil, err
	}
	var received []*frost.DKGRound2
	for _, m := range out {
		p := peers[m.To]
		enc, err := m.AppendBinary(nil)
		if err != nil {
			return nil, err
		}
		b, err := p.exchange(typeDKGRound2, enc)
		clear(enc)
		if err != nil {
			return nil, err
		}
		pkg, err := frost.ParseDKGRound2(b)
		clear(b)
		if err != nil {
			return nil, &frost.DKGError{Culprit: p.ID, Round: 2, Reason: err.Error()}
		}
		if pkg.From != p.ID {
			return nil, &frost.DKGError{Culprit: p.ID, Round: 2, Reason: fmt.Sprintf("sent a share from participant %d", pkg.From)}
		}
		received = append(received, pkg)
	}
	return received, nil
}

func sortIDs(ids []frost.Identifier) []frost.Identifier {
	slices.Sort(ids)
	return ids
}

func mapsKeys[V any](m map[frost.Identifier]V) []frost.Identifier {
	ids := make([]frost.Identifier, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	return ids
}

type peerConn struct {
	c *tls.Conn
	r *bufio.Reader
}

type dkgPeer struct {
	Remote
	name string
	conn chan peerConn
	c    *tls.Conn
	r    *bufio.Reader
	w    *frameWriter
}

func sortedPeers(m map[frost.Identifier]*dkgPeer) []*dkgPeer {
	var out []*dkgPeer
	for _, id := range sortIDs(mapsKeys(m)) {
		out = append(out, m[id])
	}
	return out
}

// exchange sends a frame of type typ to the peer and reads the peer's.
func (p *dkgPeer) exchange(typ byte, body []byte) ([]byte, error) {
	if err := p.w.write(frame{typ: typ, body: body}); err != nil {
		return nil, fmt.Errorf("threshold: DKG: participant %d: %w", p.ID, err)
	}
	f, err := readFrame(p.r)
	if err != nil {
		return nil, fmt.Errorf("threshold: DKG: participant %d: %w", p.ID, err)
	}
	if f.typ != typ {
		return nil, &frost.DKGError{Culprit: p.ID, Reason: fmt.Sprintf("sent frame type %d, want %d", f.typ, typ)}
	}
	return f.body, nil
}

// certName reports whether the verified peer certificate of c is valid for
// name.
func certName(c *tls.Conn, name string) bool {
	st := c.ConnectionState()
	return len(st.PeerCertificates) > 0 && st.PeerCertificates[0].VerifyHostname(name) == nil
}

func acceptPeers(ctx context.Context, cfg DKGConfig, peers map[frost.Identifier]*dkgPeer) error {
	want := 0
	for _, p := range peers {
		if p.ID < cfg.ID {
			want++
		}
	}
	conf := cfg.TLS.Clone()
	conf.MinVersion = tls.VersionTLS13
	conf.ClientAuth = tls.RequireAndVerifyClientCert
	if conf.ClientCAs == nil {
		conf.ClientCAs = conf.RootCAs
	}
	if conf.VerifyPeerCertificate != nil {
		conf.SessionTicketsDisabled = true // not called on a resumed session
	}
	for want > 0 {
		raw, err := cfg.Listener.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("threshold: DKG: accepting peers: %w", err)
		}
		c := tls.Server(raw, conf)
		hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err = c.HandshakeContext(hctx)
		cancel()
		if err != nil {
			c.Close()
			continue
		}
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		r := bufio.NewReader(c)
		f, err := readFrame(r)
		c.SetReadDeadline(time.Time{})
		if err != nil || f.typ != typeDKGHello || len(f.body) != 2 {
			c.Close()
			continue
		}
		p := peers[frost.Identifier(binary.BigEndian.Uint16(f.body))]
		if p == nil || p.ID > cfg.ID || !certName(c, p.name) || len(p.conn) > 0 {
			c.Close() // not a peer we accept, or its certificate is not its own
			continue
		}
		p.conn <- peerConn{c, r}
		want--
	}
	return nil
}

func dialPeer(ctx context.Context, cfg DKGConfig, dial func(context.Context, string, string) (net.Conn, error), p *dkgPeer) error {
	conf, err := clientTLS(cfg.TLS)
	if err != nil {
		return err
	}
	conf.ServerName = p.name
	wait := backoff.Backoff{Min: 10 * time.Millisecond, Max: time.Second}
	for {
		raw, err := dial(ctx, "tcp", p.Addr)
		if err == nil {
			c := tls.Client(raw, conf)
			if err = c.HandshakeContext(ctx); err == nil {
				w := newFrameWriter(c)
				if err = w.write(frame{typ: typeDKGHello, body: binary.BigEndian.AppendUint16(nil, uint16(cfg.ID))}); err == nil {
					p.conn <- peerConn{c, bufio.NewReader(c)}
					return nil
				}
			}
			c.Close()
			var verr *tls.CertificateVerificationError
			if errors.As(err, &verr) {
				return fmt.Errorf("threshold: DKG: participant %d: %w", p.ID, err)
			}
		}
		if !wait.Sleep(ctx) {
			return fmt.Errorf("threshold: DKG: dialing participant %d: %w", p.ID, ctx.Err())
		}
	}
}
