package privvaltest

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/signerkit/signerkit/privval"
	"github.com/signerkit/signerkit/signbytes"
)

// Vote is a tendermint.types.Vote as the node sends it and the signer
// answers it. Extension and ExtensionSignature travel only in
// privval.V038.
type Vote struct {
	Phase              signbytes.Phase // signbytes.Prevote or signbytes.Precommit
	Height             int64
	Round              int32
	BlockID            signbytes.BlockID
	Timestamp          time.Time
	ValidatorAddress   []byte
	ValidatorIndex     int32
	Signature          []byte
	Extension          []byte
	ExtensionSignature []byte
}

// Proposal is a tendermint.types.Proposal.
type Proposal struct {
	Height    int64
	Round     int32
	POLRound  int32 // -1 when there is none
	BlockID   signbytes.BlockID
	Timestamp time.Time
	Signature []byte
}

// RemoteSignerError is a refusal the signer sent back: a RemoteSignerError
// of the privval protocol (Code and Description) or the error string of
// a native SignResponse (Description only).
type RemoteSignerError struct {
	Code        privval.ErrorCode
	Description string
}

// Error returns "remote signer error (<code>): <description>".
func (e *RemoteSignerError) Error() string {
	return fmt.Sprintf("remote signer error (%v): %s", e.Code, e.Description)
}

// Listener is a node's privval listener: the address a privval.Endpoint
// dials (privval.Config's Network and Address).
type Listener struct {
	// Dialect is the protocol version the Clients of Accept speak.
	Dialect privval.Dialect
	// Handshake, when set, secures each accepted connection before the
	// protocol starts, as the node's SecretConnection does over TCP.
	Handshake privval.Handshake

	ln  net.Listener
	dir string // the Unix socket's directory, removed by Close
}

// NewListener listens on network: "tcp" on 127.0.0.1 at a free port, or
// "unix" at a socket in a new temporary directory (Close removes it).
func NewListener(network string, d privval.Dialect) (*Listener, error) {
	l := &Listener{Dialect: d}
	addr := "127.0.0.1:0"
	switch network {
	case "tcp":
	case "unix":
		// Socket paths are limited to about 100 bytes; a test's TempDir may
		// be longer, so this one is short and made here.
		dir, err := os.MkdirTemp("", "pvt")
		if err != nil {
			return nil, err
		}
		l.dir, addr = dir, filepath.Join(dir, "s")
	default:
		return nil, fmt.Errorf("privvaltest: network %q: want tcp or unix", network)
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		if l.dir != "" {
			_ = os.RemoveAll(l.dir)
		}
		return nil, err
	}
	l.ln = ln
	return l, nil
}

// Network returns "tcp" or "unix", for privval.Config.Network.
func (l *Listener) Network() string { return l.ln.Addr().Network() }

// Address returns the listening address, for privval.Config.Address.
func (l *Listener) Address() string { return l.ln.Addr().String() }

// Accept waits for the signer's connection, runs the Handshake on it and
// returns a Client for it. When ctx ends first it closes the Listener,
// to stop waiting, and returns ctx's error.
func (l *Listener) Accept(ctx context.Context) (*Client, error) {
	type res struct {
		c   net.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() { c, err := l.ln.Accept(); ch <- res{c, err} }()
	var conn net.Conn
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, r.err
		}
		conn = r.c
	case <-ctx.Done():
		// Unblock the Accept by closing the listener; a late connection
		// is closed as it arrives.
		_ = l.ln.Close()
		if r := <-ch; r.c != nil {
			_ = r.c.Close()
		}
		return nil, ctx.Err()
	}
	sc, peer, err := secure(ctx, l.Handshake, conn)
	if err != nil {
		return nil, err
	}
	c := NewClient(sc, l.Dialect)
	c.peer = peer
	return c, nil
}

// Close stops listening and removes the Unix socket's directory. Clients
// already accepted stay open.
func (l *Listener) Close() error {
	err := l.ln.Close()
	if l.dir != "" {
		if rerr := os.RemoveAll(l.dir); err == nil {
			err = rerr
		}
	}
	return err
}

// secure runs h on conn, bound to ctx, and closes conn when it fails.
func secure(ctx context.Context, h privval.Handshake, conn net.Conn) (net.Conn, ed25519.PublicKey, error) {
	if h == nil {
		return conn, nil, nil
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	sc, peer, err := h(ctx, conn)
	if !stop() && err == nil {
		err = ctx.Err()
	}
	if err != nil {
		_ = conn.Close()
		return nil, nil, fmt.Errorf("privvaltest: handshake: %w", err)
	}
	_ = conn.SetDeadline(time.Time{})
	return sc, peer, nil
}

// conn is a connection that runs one request at a time.
type conn struct {
	mu       sync.Mutex
	conn     net.Conn
	br       *bufio.Reader
	out, in  []byte
	deadline bool // a deadline is set on conn
}

// roundTrip sends msg in one frame and reads the answer, of at most max
// bytes, within ctx. The answer is valid until the next call.
func (c *conn) roundTrip(ctx context.Context, msg []byte, max int) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if d, ok := ctx.Deadline(); ok {
		_ = c.conn.SetDeadline(d)
		c.deadline = true
	} else if c.deadline {
		_ = c.conn.SetDeadline(time.Time{})
		c.deadline = false
	}
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() { _ = c.conn.SetDeadline(time.Unix(1, 0)) })
		defer func() {
			if !stop() {
				c.deadline = true // the deadline in the past stays
			}
		}()
	}
	c.out = binary.AppendUvarint(c.out[:0], uint64(len(msg)))
	c.out = append(c.out, msg...)
	if _, err := c.conn.Write(c.out); err != nil {
		return nil, ctxErr(ctx, err)
	}
	in, err := readFrame(c.br, max, c.in)
	if err != nil {
		return nil, ctxErr(ctx, err)
	}
	c.in = in
	return in, nil
}

func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	return err
}

// Client is the node's side of one privval connection: it sends requests
// to the signer that dialed in and decodes the answers. Its methods may
// be called from several goroutines; they run one at a time. A refusal
// comes back as a *RemoteSignerError and leaves the connection usable;
// any other error means the connection is no longer in step.
type Client struct {
	c       conn
	dialect privval.Dialect
	peer    ed25519.PublicKey
}

// NewClient returns a Client over conn, an accepted (and, if need be,
// secured) connection from a signer that speaks d.
func NewClient(conn net.Conn, d privval.Dialect) *Client {
	c := &Client{dialect: d}
	c.c.conn, c.c.br = conn, bufio.NewReaderSize(conn, 4096)
	return c
}

// Peer returns the signer's identity key from the Handshake, or nil.
func (c *Client) Peer() ed25519.PublicKey { return c.peer }

// Close closes the connection.
func (c *Client) Close() error { return c.c.conn.Close() }

func (c *Client) call(ctx context.Context, msg pb, want int) (response, error) {
	c.c.mu.Lock()
	defer c.c.mu.Unlock()
	b, err := c.c.roundTrip(ctx, msg, privval.MaxFrame)
	if err != nil {
		return response{}, err
	}
	r, err := decodeResponse(b, c.dialect)
	if err != nil {
		return response{}, fmt.Errorf("privvaltest: response %x: %w", b, err)
	}
	if r.kind != want {
		return response{}, fmt.Errorf("privvaltest: response of type %d to a request of type %d", r.kind, want-1)
	}
	if r.err != nil {
		return r, r.err
	}
	return r, nil
}

// PubKey asks for the validator's public key on chainID.
func (c *Client) PubKey(ctx context.Context, chainID string) (ed25519.PublicKey, error) {
	r, err := c.call(ctx, pb(nil).message(fPubKeyRequest, pb(nil).bytes(1, []byte(chainID))), fPubKeyResponse)
	if err != nil {
		return nil, err
	}
	if len(r.pub) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("privvaltest: public key of %d bytes, not an Ed25519 key", len(r.pub))
	}
	return r.pub, nil
}

// SignVote asks the signer to sign v on chainID and returns the vote it
// sent back: v with its Signature, the earlier Timestamp when the signer
// gave back an earlier signature for a timestamp-only change, and in
// privval.V038 the ExtensionSignature.
func (c *Client) SignVote(ctx context.Context, chainID string, v *Vote) (*Vote, error) {
	msg := pb(nil).message(fSignVoteRequest, pb(nil).vote(1, v, c.dialect).bytes(2, []byte(chainID)))
	r, err := c.call(ctx, msg, fSignedVoteResponse)
	if err != nil {
		return nil, err
	}
	if r.vote == nil || len(r.vote.Signature) == 0 {
		return nil, errors.New("privvaltest: a signed vote response without a signature")
	}
	return r.vote, nil
}

// SignProposal asks the signer to sign p on chainID and returns the
// proposal it sent back.
func (c *Client) SignProposal(ctx context.Context, chainID string, p *Proposal) (*Proposal, error) {
	msg := pb(nil).message(fSignProposalRequest, pb(nil).proposal(1, p).bytes(2, []byte(chainID)))
	r, err := c.call(ctx, msg, fSignedProposalResponse)
	if err != nil {
		return nil, err
	}
	if r.proposal == nil || len(r.proposal.Signature) == 0 {
		return nil, errors.New("privvaltest: a signed proposal response without a signature")
	}
	return r.proposal, nil
}

// Ping sends a PingRequest and waits for the PingResponse.
func (c *Client) Ping(ctx context.Context) error {
	_, err := c.call(ctx, pb(nil).always(fPingRequest, nil), fPingResponse)
	return err
}

// NativeClient is gno's remote_signer client side of one connection to a
// privval.Server. Its methods may be called from several goroutines; they
// run one at a time. A refusal comes back as a *RemoteSignerError whose
// Description is the signer's error string.
type NativeClient struct {
	c    conn
	peer ed25519.PublicKey
}

// DialNative dials a privval.Server at network and address as gno's
// remote_signer client does, runs h (nil: none) on the connection and
// returns a NativeClient for it.
func DialNative(ctx context.Context, network, address string, h privval.Handshake) (*NativeClient, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	sc, peer, err := secure(ctx, h, nc)
	if err != nil {
		return nil, err
	}
	c := NewNativeClient(sc)
	c.peer = peer
	return c, nil
}

// NewNativeClient returns a NativeClient over conn, a connection to a
// privval.Server that is already secured if it needs to be.
func NewNativeClient(conn net.Conn) *NativeClient {
	n := &NativeClient{}
	n.c.conn, n.c.br = conn, bufio.NewReaderSize(conn, 4096)
	return n
}

// Peer returns the signer's identity key from the Handshake, or nil.
func (n *NativeClient) Peer() ed25519.PublicKey { return n.peer }

// Close closes the connection.
func (n *NativeClient) Close() error { return n.c.conn.Close() }

// call sends an Any of typeURL and returns the response's fields.
func (n *NativeClient) call(ctx context.Context, typeURL string, value []byte, want string) ([]byte, error) {
	n.c.mu.Lock()
	defer n.c.mu.Unlock()
	b, err := n.c.roundTrip(ctx, anyOf(typeURL, value), privval.MaxNativeFrame)
	if err != nil {
		return nil, err
	}
	url, v, err := decodeAny(b)
	if err != nil {
		return nil, fmt.Errorf("privvaltest: response %x: %w", b, err)
	}
	if url != want {
		return nil, fmt.Errorf("privvaltest: %s in answer to a %s", url, typeURL)
	}
	return v, nil
}

// nativeResult decodes the {1: result, 2: RemoteSignerError{1: string}}
// shape both native responses have.
func nativeResult(v []byte) (result []byte, err error) {
	derr := each(v, func(f field) error {
		switch f.num {
		case 1:
			result = f.b
		case 2:
			e := &RemoteSignerError{}
			if perr := each(f.b, func(g field) error {
				if g.num == 1 {
					e.Description = string(g.b)
				}
				return nil
			}); perr != nil {
				return perr
			}
			err = e
		}
		return nil
	})
	if derr != nil {
		return nil, derr
	}
	return result, err
}

// PubKey asks for the validator's public key.
func (n *NativeClient) PubKey(ctx context.Context) (ed25519.PublicKey, error) {
	v, err := n.call(ctx, nativePubKeyRequest, nil, nativePubKeyResponse)
	if err != nil {
		return nil, err
	}
	key, err := nativeResult(v)
	if err != nil {
		return nil, err
	}
	url, kv, err := decodeAny(key)
	if err != nil || url != nativePubKeyEd25519 {
		return nil, fmt.Errorf("privvaltest: public key of type %q", url)
	}
	var pub []byte
	if err := each(kv, func(f field) error {
		if f.num == 1 {
			pub = f.b
		}
		return nil
	}); err != nil || len(pub) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("privvaltest: malformed Ed25519 public key %x", kv)
	}
	return pub, nil
}

// Sign asks the signer to sign signBytes (the sign bytes of a vote or
// proposal, as gno's tm2 builds them) and returns the signature.
func (n *NativeClient) Sign(ctx context.Context, signBytes []byte) ([]byte, error) {
	v, err := n.call(ctx, nativeSignRequest, pb(nil).bytes(1, signBytes), nativeSignResponse)
	if err != nil {
		return nil, err
	}
	sig, err := nativeResult(v)
	if err != nil {
		return nil, err
	}
	if len(sig) == 0 {
		return nil, errors.New("privvaltest: a sign response without a signature")
	}
	return sig, nil
}
