package threshold

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"sync"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/threshold/frost"
)

// member is a signer the coordinator can ask for nonce commitments and
// shares: a remote party, or a share the coordinator holds itself.
type member interface {
	presign(ctx context.Context, n int, outstanding bool) ([]frost.Presigned, error)
	share(ctx context.Context, h frost.NonceHandle, list []frost.SigningCommitments, msg []byte) (frost.SignatureShare, error)
	// release has the signer discard the fresh nonce pairs hs (at most
	// maxPresignBatch), whose commitments the coordinator dropped.
	release(ctx context.Context, hs []frost.NonceHandle) error
	close()
}

// remote is a party over the network, with one connection for signing
// and one for presigning, so a large presign batch never delays a sign
// and the sign connection's bytes are online signing's alone.
type remote struct {
	id          frost.Identifier
	addr        string
	tls         *tls.Config
	dial        func(context.Context, string, string) (net.Conn, error)
	signC, preC counters

	mu     sync.Mutex
	conns  [2]*clientConn // 0 sign, 1 presign
	dials  [2]sync.Mutex
	closed bool
}

func (r *remote) conn(ctx context.Context, kind int) (*clientConn, error) {
	r.mu.Lock()
	cc := r.conns[kind]
	r.mu.Unlock()
	if cc != nil && !cc.broken() {
		return cc, nil
	}
	r.dials[kind].Lock()
	defer r.dials[kind].Unlock()
	r.mu.Lock()
	cc, closed := r.conns[kind], r.closed
	r.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("threshold: %w", signer.ErrClosed)
	}
	if cc != nil && !cc.broken() {
		return cc, nil
	}
	c := &r.signC
	if kind == 1 {
		c = &r.preC
	}
	cc, err := dialParty(ctx, r.dial, r.addr, r.tls, c)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("threshold: party %d at %s: %w", r.id, r.addr, ctxErr)
		}
		return nil, fmt.Errorf("threshold: party %d at %s: %w: %w", r.id, r.addr, signer.ErrDeviceNotFound, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		cc.close()
		return nil, fmt.Errorf("threshold: %w", signer.ErrClosed)
	}
	r.conns[kind] = cc
	return cc, nil
}

func (r *remote) presign(ctx context.Context, n int, outstanding bool) ([]frost.Presigned, error) {
	cc, err := r.conn(ctx, 1)
	if err != nil {
		return nil, err
	}
	req := presignRequest{count: uint16(min(n, maxPresignBatch))}
	if outstanding {
		req.flags = presignOutstanding
	}
	f, err := cc.roundTrip(ctx, typePresign, req.encode())
	if err != nil {
		return nil, err
	}
	if err := responseError(r.id, f, typePresigned); err != nil {
		return nil, err
	}
	return parsePresigned(f.body, r.id)
}

func (r *remote) share(ctx context.Context, h frost.NonceHandle, list []frost.SigningCommitments, msg []byte) (frost.SignatureShare, error) {
	cc, err := r.conn(ctx, 0)
	if err != nil {
		return frost.SignatureShare{}, err
	}
	req := signRequest{handle: h, msg: msg}
	for _, c := range list {
		if c.ID != r.id {
			req.others = append(req.others, c)
		}
	}
	body, err := req.encode()
	if err != nil {
		return frost.SignatureShare{}, err
	}
	f, err := cc.roundTrip(ctx, typeSign, body)
	if err != nil {
		return frost.SignatureShare{}, err
	}
	if err := responseError(r.id, f, typeShare); err != nil {
		return frost.SignatureShare{}, err
	}
	return parseShare(r.id, f.body)
}

func (r *remote) release(ctx context.Context, hs []frost.NonceHandle) error {
	cc, err := r.conn(ctx, 1)
	if err != nil {
		return err
	}
	f, err := cc.roundTrip(ctx, typeRelease, encodeRelease(hs))
	if err != nil {
		return err
	}
	if err := responseError(r.id, f, typeReleased); err != nil {
		return err
	}
	if len(f.body) != 2 {
		return &ProtocolError{"release answer of wrong length"}
	}
	return nil
}

func (r *remote) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	for i, cc := range r.conns {
		if cc != nil {
			cc.close()
			r.conns[i] = nil
		}
	}
}

// local is a share the coordinator holds itself, as a horcrux cosigner
// does: it signs without a network round trip.
type local struct {
	nonces *frost.NonceStore
}

func (l *local) presign(_ context.Context, n int, outstanding bool) ([]frost.Presigned, error) {
	var out []frost.Presigned
	if outstanding {
		out = l.nonces.Outstanding()
	}
	if n > len(out) {
		made, err := l.nonces.Generate(n - len(out))
		if err != nil {
			return nil, err
		}
		out = append(out, made...)
	}
	return out, nil
}

func (l *local) share(_ context.Context, h frost.NonceHandle, list []frost.SigningCommitments, msg []byte) (frost.SignatureShare, error) {
	return l.nonces.Sign(h, msg, list)
}

func (l *local) release(_ context.Context, hs []frost.NonceHandle) error {
	_, err := l.nonces.Release(hs...)
	return err
}

func (l *local) close() {}
