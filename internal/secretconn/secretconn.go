package secretconn

import (
	"bytes"
	"context"
	"crypto"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"sync"
	"time"

	"golang.org/x/crypto/chacha20poly1305"

	"github.com/signerkit/signerkit/signer"
)

// Variant selects the handshake.
type Variant int

const (
	// Merlin is the handshake of Tendermint v0.34 and CometBFT v0.38
	// (challenge from a Merlin transcript, protobuf messages). CometBFT's
	// privval listener and gno v1.7.1's tmkms_listener speak it.
	Merlin Variant = iota + 1
	// PreMerlin is tm2's handshake as of gno v1.7.1 (challenge from HKDF,
	// amino authentication message). gno's native remote signer speaks it.
	PreMerlin
)

func (v Variant) String() string {
	switch v {
	case Merlin:
		return "merlin"
	case PreMerlin:
		return "pre-merlin"
	}
	return fmt.Sprintf("Variant(%d)", int(v))
}

const (
	dataMaxSize     = 1024
	dataLenSize     = 4
	frameSize       = dataLenSize + dataMaxSize
	sealedFrameSize = frameSize + chacha20poly1305.Overhead
	// writeBatch bounds the frames sealed per Write on the underlying
	// conn, so a large Write does not allocate in proportion.
	writeBatch = 16

	hkdfInfo        = "TENDERMINT_SECRET_CONNECTION_KEY_AND_CHALLENGE_GEN"
	transcriptLabel = "TENDERMINT_SECRET_CONNECTION_TRANSCRIPT_HASH"
)

// Handshake runs the SecretConnection handshake of variant v over conn,
// proving identity (an Ed25519 key: an ed25519.PrivateKey or any
// crypto.Signer whose Public is an ed25519.PublicKey) and authenticating
// the peer. Dialer and listener call it alike.
//
// ctx bounds the handshake: its deadline is set on conn for the duration,
// and cancelling it aborts the handshake; either way the error wraps
// ctx.Err() and no goroutine is left behind. Handshake clears conn's
// deadlines when it returns. On error the caller still owns conn and
// should close it.
//
// The returned Conn has authenticated the peer's key, not authorized it:
// check RemotePubKey against an allow-list.
func Handshake(ctx context.Context, conn net.Conn, identity crypto.Signer, v Variant) (c *Conn, err error) {
	if v != Merlin && v != PreMerlin {
		return nil, &Error{Op: "handshake", Err: fmt.Errorf("%w: unknown variant %d", signer.ErrInvalidArgument, int(v))}
	}
	if identity == nil {
		return nil, &Error{Op: "handshake", Err: fmt.Errorf("%w: nil identity", signer.ErrInvalidArgument)}
	}
	locPub, ok := identity.Public().(ed25519.PublicKey)
	if !ok || len(locPub) != ed25519.PublicKeySize {
		return nil, &Error{Op: "handshake", Err: fmt.Errorf("%w: identity is %T, not Ed25519", signer.ErrUnsupported, identity.Public())}
	}
	if err := ctx.Err(); err != nil {
		return nil, &Error{Op: "handshake", Err: err}
	}

	// Bind conn to ctx: its deadline on conn now, and a deadline in the
	// past if ctx is cancelled first, which unblocks any Read or Write.
	deadline, hasDeadline := ctx.Deadline()
	if hasDeadline {
		if err := conn.SetDeadline(deadline); err != nil {
			return nil, &Error{Op: "handshake", Err: err}
		}
	}
	aborted := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		_ = conn.SetDeadline(aLongTimeAgo)
		close(aborted)
	})
	defer func() {
		if !stop() {
			// ctx ended while we worked: the deadline is poisoned, and a
			// handshake that just made it is not one to trust the caller
			// still wants.
			<-aborted
			c, err = nil, &Error{Op: "handshake", Err: fmt.Errorf("%w (%v)", ctx.Err(), unwrapOp(err))}
		} else if err != nil && hasDeadline && errors.Is(err, os.ErrDeadlineExceeded) {
			// conn's deadline fired a hair before ctx's timer.
			err = &Error{Op: "handshake", Err: fmt.Errorf("%w: %w", context.DeadlineExceeded, unwrapOp(err))}
		}
		_ = conn.SetDeadline(time.Time{})
	}()

	h := &handshake{conn: conn, v: v, identity: identity, locPub: locPub}
	return h.run()
}

// aLongTimeAgo is a deadline in the past, which fails pending I/O at once.
var aLongTimeAgo = time.Unix(1, 0)

func unwrapOp(err error) error {
	if err == nil {
		return errors.New("handshake completed")
	}
	var e *Error
	if errors.As(err, &e) {
		return fmt.Errorf("%s: %w", e.Op, e.Err)
	}
	return err
}

type handshake struct {
	conn     net.Conn
	v        Variant
	identity crypto.Signer
	locPub   ed25519.PublicKey

	// authMsg, in tests only, replaces the authentication message.
	authMsg func(challenge, sig []byte) []byte
}

// exchange writes out while reading the peer's message with read. The two
// run at once: net.Pipe, for one, does not buffer. If either fails the
// conn's deadline is moved to the past so the other returns too.
func (h *handshake) exchange(w io.Writer, out []byte, read func() error) (werr, rerr error) {
	done := make(chan error, 1)
	go func() {
		_, err := w.Write(out)
		if err != nil {
			_ = h.conn.SetDeadline(aLongTimeAgo)
		}
		done <- err
	}()
	rerr = read()
	if rerr != nil {
		_ = h.conn.SetDeadline(aLongTimeAgo)
	}
	werr = <-done
	return werr, rerr
}

// firstError picks the error to report from an exchange: the read's unless
// it only failed because the write's failure poisoned the deadline.
func firstError(op string, werr, rerr error) error {
	err := rerr
	if err == nil || (werr != nil && errors.Is(rerr, os.ErrDeadlineExceeded) && !errors.Is(werr, os.ErrDeadlineExceeded)) {
		err = werr
	}
	if err == nil {
		return nil
	}
	var we *wireError
	if errors.As(err, &we) {
		return protocolError(op, we.cause, we.detail)
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Op: op, Err: err}
}

// run is the handshake: ephemeral keys exchanged, session keys and the
// challenge derived from them, then each side's identity proved inside
// the encrypted channel.
func (h *handshake) run() (*Conn, error) {
	locEph, remEph, dh, err := h.exchangeEphemeral()
	if err != nil {
		return nil, err
	}
	c, challenge, err := h.deriveKeys(locEph, remEph, dh)
	if err != nil {
		return nil, err
	}
	if err := h.authenticate(c, challenge); err != nil {
		return nil, err
	}
	return c, nil
}

// exchangeEphemeral swaps ephemeral X25519 keys with the peer and returns
// both and their shared secret, refusing our own key sent back and
// small-order points.
func (h *handshake) exchangeEphemeral() (locEph, remEph, dh []byte, err error) {
	const opEph = "handshake: ephemeral key exchange"
	eph, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, nil, &Error{Op: opEph, Err: err}
	}
	locEph = eph.PublicKey().Bytes()
	var rem [32]byte
	werr, rerr := h.exchange(h.conn, encodeEphKey(locEph), func() error {
		body, err := readDelimited(h.conn, maxHandshakeMsg)
		if err != nil {
			return err
		}
		rem, err = decodeEphKey(body)
		return err
	})
	if err := firstError(opEph, werr, rerr); err != nil {
		return nil, nil, nil, err
	}
	if bytes.Equal(rem[:], locEph) {
		return nil, nil, nil, protocolError(opEph, ErrBadEphemeralKey, "our own key sent back")
	}
	remKey, err := ecdh.X25519().NewPublicKey(rem[:])
	if err != nil {
		return nil, nil, nil, protocolError(opEph, ErrBadEphemeralKey, err.Error())
	}
	// ECDH fails on an all-zero shared secret, which is what every
	// small-order point (the vendors' blacklist, and their encodings with
	// the top bit set) yields with a clamped scalar.
	dh, err = eph.ECDH(remKey)
	if err != nil {
		return nil, nil, nil, protocolError(opEph, ErrBadEphemeralKey, "small-order point")
	}
	return locEph, rem[:], dh, nil
}

// deriveKeys derives the session's keys and the challenge each side signs
// from the ephemeral keys and their shared secret, and returns the
// encrypted channel, wiping the secret.
func (h *handshake) deriveKeys(locEph, remEph, dh []byte) (*Conn, []byte, error) {
	locIsLeast := bytes.Compare(locEph, remEph) < 0
	n := 2 * chacha20poly1305.KeySize
	if h.v == PreMerlin {
		n += 32
	}
	okm, err := hkdf.Key(sha256.New, dh, nil, hkdfInfo, n)
	if err != nil {
		return nil, nil, &Error{Op: "handshake: key derivation", Err: err}
	}
	recvKey, sendKey := okm[:32], okm[32:64]
	if !locIsLeast {
		recvKey, sendKey = sendKey, recvKey
	}
	var challenge [32]byte
	if h.v == PreMerlin {
		copy(challenge[:], okm[64:96])
	} else {
		lo, hi := locEph, remEph
		if !locIsLeast {
			lo, hi = hi, lo
		}
		t := newTranscript(transcriptLabel)
		t.appendMessage("EPHEMERAL_LOWER_PUBLIC_KEY", lo)
		t.appendMessage("EPHEMERAL_UPPER_PUBLIC_KEY", hi)
		t.appendMessage("DH_SECRET", dh)
		t.challengeBytes("SECRET_CONNECTION_MAC", challenge[:])
	}
	c, err := newConn(h.conn, h.v, sendKey, recvKey)
	if err != nil {
		return nil, nil, &Error{Op: "handshake: key derivation", Err: err}
	}
	clear(okm)
	clear(dh)
	return c, challenge[:], nil
}

// authenticate proves our identity to the peer by signing the challenge,
// inside the encrypted channel c, and checks the peer's, which c then
// carries.
func (h *handshake) authenticate(c *Conn, challenge []byte) error {
	const opAuth = "handshake: authentication"
	sig, err := h.identity.Sign(rand.Reader, challenge, crypto.Hash(0))
	if err != nil {
		return &Error{Op: opAuth, Err: fmt.Errorf("signing the challenge: %w", err)}
	}
	msg := encodeAuthSig(h.v, h.locPub, sig)
	if h.authMsg != nil {
		msg = h.authMsg(challenge, sig)
	}
	var remPub ed25519.PublicKey
	var remSig []byte
	werr, rerr := h.exchange(c, msg, func() error {
		body, err := readDelimited(c, maxHandshakeMsg)
		if err != nil {
			return err
		}
		remPub, remSig, err = decodeAuthSig(h.v, body)
		return err
	})
	if err := firstError(opAuth, werr, rerr); err != nil {
		return err
	}
	// crypto/ed25519 checks the key's length only: under a small-order
	// key (the identity, say) one constant signature verifies for every
	// challenge, and a peer could claim such a key without holding one.
	if err := signer.CheckEd25519PublicKey(remPub); err != nil {
		return protocolError(opAuth, ErrBadIdentityKey, "")
	}
	if len(remSig) != ed25519.SignatureSize || !ed25519.Verify(remPub, challenge, remSig) {
		return protocolError(opAuth, ErrAuthFailed, "")
	}
	c.remote = bytes.Clone(remPub)
	return nil
}

// Conn is an established SecretConnection. It is a net.Conn: Read and Write
// may run at once, each from one goroutine at a time (a mutex serializes
// more). Deadlines pass through to the underlying conn; a Read that times
// out in the middle of a frame keeps what it has and resumes, a Write that
// fails breaks the connection for writing.
type Conn struct {
	conn    net.Conn
	variant Variant
	remote  ed25519.PublicKey

	rmu        sync.Mutex
	recvAEAD   cipher.AEAD
	recvCount  uint64
	recvNonce  [chacha20poly1305.NonceSize]byte
	recvSealed [sealedFrameSize]byte
	recvFill   int
	recvPlain  [frameSize]byte
	recvBuf    []byte // unread data of the current frame, in recvPlain
	recvErr    error  // sticky

	wmu       sync.Mutex
	sendAEAD  cipher.AEAD
	sendCount uint64
	sendNonce [chacha20poly1305.NonceSize]byte
	sendPlain [frameSize]byte
	sendBuf   []byte
	sendErr   error // sticky
}

var _ net.Conn = (*Conn)(nil)

func newConn(conn net.Conn, v Variant, sendKey, recvKey []byte) (*Conn, error) {
	s, err := chacha20poly1305.New(sendKey)
	if err != nil {
		return nil, err
	}
	r, err := chacha20poly1305.New(recvKey)
	if err != nil {
		return nil, err
	}
	return &Conn{conn: conn, variant: v, sendAEAD: s, recvAEAD: r}, nil
}

// RemotePubKey is the peer's authenticated Ed25519 identity key.
func (c *Conn) RemotePubKey() ed25519.PublicKey { return c.remote }

// Variant is the handshake variant the connection was made with.
func (c *Conn) Variant() Variant { return c.variant }

// NetConn is the underlying connection.
func (c *Conn) NetConn() net.Conn { return c.conn }

// putNonce writes counter's nonce into n, whose first four bytes stay
// zero, and returns it: a Conn reuses its own nonce buffers so that no
// frame allocates one.
func putNonce(n *[chacha20poly1305.NonceSize]byte, counter uint64) []byte {
	binary.LittleEndian.PutUint64(n[4:], counter)
	return n[:]
}

// Read reads decrypted data. One Read returns data from at most one frame,
// so a message of up to 1024 bytes written with one Write arrives whole
// when p is large enough.
func (c *Conn) Read(p []byte) (int, error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	if len(p) == 0 {
		return 0, nil
	}
	for len(c.recvBuf) == 0 {
		if c.recvErr != nil {
			return 0, c.recvErr
		}
		if err := c.readFrame(); err != nil {
			return 0, err
		}
	}
	n := copy(p, c.recvBuf)
	c.recvBuf = c.recvBuf[n:]
	return n, nil
}

func (c *Conn) readFrame() error {
	for c.recvFill < len(c.recvSealed) {
		n, err := c.conn.Read(c.recvSealed[c.recvFill:])
		c.recvFill += n
		if err != nil {
			if errors.Is(err, io.EOF) && c.recvFill > 0 {
				c.recvErr = &Error{Op: "read", Err: io.ErrUnexpectedEOF}
				return c.recvErr
			}
			return err
		}
	}
	c.recvFill = 0
	if c.recvCount == math.MaxUint64 {
		c.recvErr = &Error{Op: "read", Err: errors.New("nonce counter exhausted")}
		return c.recvErr
	}
	plain, err := c.recvAEAD.Open(c.recvPlain[:0], putNonce(&c.recvNonce, c.recvCount), c.recvSealed[:], nil)
	if err != nil {
		c.recvErr = protocolError("read", ErrBadFrame, fmt.Sprintf("frame %d", c.recvCount))
		return c.recvErr
	}
	c.recvCount++
	l := binary.LittleEndian.Uint32(plain)
	if l > dataMaxSize {
		c.recvErr = protocolError("read", ErrFrameTooLarge, fmt.Sprintf("%d bytes", l))
		return c.recvErr
	}
	c.recvBuf = plain[dataLenSize : dataLenSize+l]
	return nil
}

// Write encrypts p in frames of up to 1024 bytes. Data of up to 1024 bytes
// goes in one frame, which the peer reads whole. An empty p sends nothing.
func (c *Conn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.sendErr != nil {
		return 0, c.sendErr
	}
	written := 0
	for len(p) > 0 {
		buf := c.sendBuf[:0]
		batched := 0
		for i := 0; i < writeBatch && len(p) > 0; i++ {
			if c.sendCount == math.MaxUint64 {
				c.sendErr = &Error{Op: "write", Err: errors.New("nonce counter exhausted")}
				return written, c.sendErr
			}
			chunk := p[:min(len(p), dataMaxSize)]
			p = p[len(chunk):]
			binary.LittleEndian.PutUint32(c.sendPlain[:], uint32(len(chunk)))
			copy(c.sendPlain[dataLenSize:], chunk)
			clear(c.sendPlain[dataLenSize+len(chunk):])
			buf = c.sendAEAD.Seal(buf, putNonce(&c.sendNonce, c.sendCount), c.sendPlain[:], nil)
			c.sendCount++
			batched += len(chunk)
		}
		c.sendBuf = buf
		if _, err := c.conn.Write(buf); err != nil {
			// The nonces are spent, and the peer may hold part of a
			// frame: the stream cannot go on.
			c.sendErr = &Error{Op: "write", Err: err}
			return written, c.sendErr
		}
		written += batched
	}
	return written, nil
}

// Close closes the underlying connection.
func (c *Conn) Close() error                       { return c.conn.Close() }
func (c *Conn) LocalAddr() net.Addr                { return c.conn.LocalAddr() }
func (c *Conn) RemoteAddr() net.Addr               { return c.conn.RemoteAddr() }
func (c *Conn) SetDeadline(t time.Time) error      { return c.conn.SetDeadline(t) }
func (c *Conn) SetReadDeadline(t time.Time) error  { return c.conn.SetReadDeadline(t) }
func (c *Conn) SetWriteDeadline(t time.Time) error { return c.conn.SetWriteDeadline(t) }
