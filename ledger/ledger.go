package ledger

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// Config says how to reach the Ledger and tunes the Signer. The zero value
// talks to the first Ledger found over USB HID, in chunks of 250 bytes,
// and requires app version 0.5.0 or later. The validator app holds one
// Ed25519 key and the user unlocks the device on the device itself, so
// there is no key to choose and no secret to give.
type Config struct {
	// Dial opens the transport to the device, at open and again after a
	// transport failed: HIDDialer, SpeculosDialer, a ledgersim face, or
	// ledgergo.Dialer for zondax/ledger-go's own. Nil means
	// HIDDialer(Path).
	Dial Dialer
	// Path is the HID device path (a hidraw node on Linux) of the Ledger
	// that the default HID dialer opens; empty means the first Ledger
	// (vendor id 0x2c97) found. It applies only when Dial is nil: setting
	// both is an error.
	Path string
	// ChunkSize is the number of sign-bytes bytes per SIGN_ED25519 APDU,
	// 1–250; zero means 250. gnokms uses 32 (a macOS HID workaround) at the
	// cost of one more exchange per 32 bytes.
	ChunkSize int
	// MinVersion is the oldest app version accepted; zero means 0.5.0,
	// what gnokms requires.
	MinVersion Version
	// MaxMessage is the longest message SignContext sends; a longer one
	// is refused before anything is sent, with a *MessageTooLargeError.
	// Zero means AppMaxMessage (128 bytes), the upstream validator app's
	// limit. NoMessageLimit (or any negative value) lifts it, leaving only
	// the 255-chunk limit: for an app that accepts longer sign bytes
	// (gnoverse's fork may, docs/protocols.md A.12), or ledgersim with
	// Config.Raw or Config.LongPrefix.
	MaxMessage int
	// SignTimeout bounds Sign, the crypto.Signer method, which takes no
	// context: a sign that has not finished by then (the wait for the
	// device's one sign slot included) fails with an error wrapping
	// context.DeadlineExceeded and its transport is dropped, so a hung
	// device cannot hold the caller, or the slot, for ever. Zero or
	// negative means DefaultSignTimeout. SignContext is bounded by its
	// context instead.
	SignTimeout time.Duration
}

// DefaultSignTimeout bounds Sign when Config.SignTimeout is zero. It
// leaves room for the user to confirm the first sign after the app starts
// on the device.
const DefaultSignTimeout = 30 * time.Second

var defaultMinVersion = Version{Minor: 5}

func (c Config) signTimeout() time.Duration {
	if c.SignTimeout <= 0 {
		return DefaultSignTimeout
	}
	return c.SignTimeout
}

func (c Config) chunkSize() int {
	if c.ChunkSize == 0 {
		return MaxChunkSize
	}
	return c.ChunkSize
}

// AppMaxMessage is the longest sign bytes the upstream validator app
// accepts: 128 bytes. Its RAM buffer is larger (16384 bytes, 1024 on a
// Nano S), but its parser wants a one-byte length prefix, L + 1 == size
// with L ≤ 127, and answers longer ones with parse error 7
// (app-tendermint src/lib/vote_parser.c, docs/protocols.md A.5). Real tm2
// messages can be longer: proposals and votes at round ≥ 1 on longer
// chain IDs, which the app cannot sign.
const AppMaxMessage = 128

// NoMessageLimit, as Config.MaxMessage, lifts the app's limit.
const NoMessageLimit = -1

// MessageTooLargeError is the refusal of a message longer than the app
// takes (Config.MaxMessage, AppMaxMessage by default), before it is
// sent. It unwraps to signer.ErrMessageTooLarge.
type MessageTooLargeError struct {
	// Size is the message's length; Limit is the longest allowed.
	Size, Limit int
}

func (e *MessageTooLargeError) Error() string {
	what := fmt.Sprintf("the limit of %d bytes set by Config.MaxMessage", e.Limit)
	if e.Limit == AppMaxMessage {
		what = fmt.Sprintf("the validator app's limit of %d bytes (a one-byte length prefix; longer sign bytes get parse error 7)", AppMaxMessage)
	}
	return fmt.Sprintf("ledger: %d-byte message is over %s: %v", e.Size, what, signer.ErrMessageTooLarge)
}

// Unwrap returns signer.ErrMessageTooLarge.
func (e *MessageTooLargeError) Unwrap() error { return signer.ErrMessageTooLarge }

// maxMessage is the app limit c sets, or 0 for none.
func (c Config) maxMessage() int {
	switch {
	case c.MaxMessage == 0:
		return AppMaxMessage
	case c.MaxMessage < 0:
		return 0
	}
	return c.MaxMessage
}

// check validates c and returns the dialer it names.
func (c Config) check() (Dialer, error) {
	if c.ChunkSize < 0 || c.ChunkSize > MaxChunkSize {
		return nil, fmt.Errorf("ledger: Config.ChunkSize %d is outside 1–%d: %w", c.ChunkSize, MaxChunkSize, signer.ErrInvalidArgument)
	}
	if c.Dial == nil {
		return HIDDialer(c.Path), nil
	}
	if c.Path != "" {
		return nil, fmt.Errorf("ledger: Config.Path is set with Config.Dial: Path is for the HID dialer that a nil Dial means: %w", signer.ErrInvalidArgument)
	}
	return c.Dial, nil
}

// Signer is the validator app's Ed25519 key as a signer.Signer. The
// device signs one message at a time, so signs are serialised; a Signer is
// safe for concurrent use, and Close may be called while signs are in
// flight (they return an error wrapping signer.ErrClosed).
type Signer struct {
	dial    Dialer
	chunk   int
	maxMsg  int // Config.MaxMessage resolved; 0 means no app limit
	pub     ed25519.PublicKey
	version Version
	timeout time.Duration // Sign's bound

	sem chan struct{} // one sign at a time, acquired with the caller's ctx

	mu     sync.Mutex
	tr     Transport // nil after a transport failure, until the next dial
	closed bool
}

var _ signer.AlgorithmSigner = (*Signer)(nil)

// Open opens the validator app through the transport cfg.Dial makes — by
// default the HID device at cfg.Path, or the first Ledger found — checks
// the app's version and reads its public key, so Public never does I/O.
// The transport stays open until Close, and is dialled again after it
// fails.
//
// Errors wrap signer.ErrDeviceNotFound (no device, or none at Path),
// ErrAppNotOpen, ErrDeviceLocked, ErrUnsupported (an app older than
// cfg.MinVersion, or the HID transport in a build without cgo) or
// ErrInvalidArgument (a bad Config).
func Open(ctx context.Context, cfg Config) (*Signer, error) {
	dial, err := cfg.check()
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	minV := cfg.MinVersion
	if minV == (Version{}) {
		minV = defaultMinVersion
	}
	tr, err := dial(ctx)
	if err != nil {
		return nil, wrap("", err)
	}
	s := &Signer{dial: dial, chunk: cfg.chunkSize(), maxMsg: cfg.maxMessage(), timeout: cfg.signTimeout(), sem: make(chan struct{}, 1), tr: tr}
	if err := s.handshake(ctx, tr, minV); err != nil {
		tr.Close()
		return nil, err
	}
	return s, nil
}

func (s *Signer) handshake(ctx context.Context, tr Transport, minV Version) error {
	resp, err := s.exchange(ctx, tr, INSGetVersion, command(INSGetVersion, 0, 0, nil))
	if err != nil {
		return err
	}
	if len(resp) != versionReplyLen {
		return fmt.Errorf("ledger: GET_VERSION: %d-byte reply, want %d: %w", len(resp), versionReplyLen, signer.ErrProtocol)
	}
	s.version = Version{Testing: resp[0] == 0xFF, Major: resp[1], Minor: resp[2], Patch: resp[3]}
	if s.version.Less(minV) {
		return fmt.Errorf("ledger: validator app %v is older than %v: %w", s.version, minV, signer.ErrUnsupported)
	}
	resp, err = s.exchange(ctx, tr, INSPublicKey, command(INSPublicKey, 0, 0, nil))
	if err != nil {
		return err
	}
	if len(resp) != publicKeySize {
		return fmt.Errorf("ledger: PUBLIC_KEY_ED25519: %d-byte key, want %d: %w", len(resp), publicKeySize, signer.ErrProtocol)
	}
	// A small-order key (the identity point, say) would let one constant
	// reply verify for every message, disabling the verify-before-return
	// of SignContext; a non-canonical one verifies differently from
	// library to library. No seed gives either: the device is lying.
	if err := signer.CheckEd25519PublicKey(resp); err != nil {
		return fmt.Errorf("ledger: PUBLIC_KEY_ED25519: %w", err)
	}
	s.pub = ed25519.PublicKey(append([]byte(nil), resp...))
	return nil
}

// exchange sends one APDU, reporting it to ctx's trace, and returns the
// response data of a 0x9000 reply or a *StatusError.
func (s *Signer) exchange(ctx context.Context, tr Transport, ins byte, apdu []byte) ([]byte, error) {
	trace := signertrace.ContextTrace(ctx)
	trace.Add(signertrace.CountAPDUs, 1)
	trace.Add(signertrace.CountRoundTrips, 1)
	start := trace.Start()
	resp, err := tr.Exchange(ctx, apdu)
	trace.Measured(signertrace.StageTransport, start)
	if err != nil {
		return nil, wrap(insName(ins), err)
	}
	return splitResponse(ins, resp)
}

// Public returns the app's Ed25519 public key, read at open: a copy,
// which the caller may modify without affecting the Signer.
func (s *Signer) Public() crypto.PublicKey { return ed25519.PublicKey(bytes.Clone(s.pub)) }

// Algorithm returns signer.Ed25519, the validator app's one algorithm.
func (s *Signer) Algorithm() signer.Algorithm { return signer.Ed25519 }

// Version returns the app version read at open.
func (s *Signer) Version() Version { return s.version }

// KeepsSignState reports true: the validator app keeps its own last
// height/round/step and moves it when it signs, before its answer leaves,
// so a signature lost on the way (a crash, a timeout) leaves the device
// refusing that step for good. The daemon marks each sign in flight on
// such a device, to name that cause when the device refuses.
func (s *Signer) KeepsSignState() bool { return true }

// ChunkSize returns the number of message bytes sent per APDU.
func (s *Signer) ChunkSize() int { return s.chunk }

// MaxMessage returns the longest message this client sends:
// Config.MaxMessage (AppMaxMessage, 128 bytes, by default), and never more
// than 255 chunks, the most P2 can count. A longer message is refused
// before it is sent, with an error wrapping signer.ErrMessageTooLarge.
// With the limit lifted, the app's own buffer (16384 bytes, 1024 on a
// Nano S) may be smaller; it refuses with 0x6983, which unwraps to
// signer.ErrMessageTooLarge too.
func (s *Signer) MaxMessage() int {
	if s.maxMsg > 0 {
		return min(s.maxMsg, maxPackets*s.chunk)
	}
	return maxPackets * s.chunk
}

// Sign implements crypto.Signer for pure Ed25519: opts.HashFunc() must be
// 0 and message is the message itself. rand is ignored. Ed25519ph and
// Ed25519ctx are refused with signer.ErrUnsupported. Sign takes no
// context: it gives up after Config.SignTimeout (DefaultSignTimeout, 30 s)
// with an error wrapping context.DeadlineExceeded.
func (s *Signer) Sign(_ io.Reader, message []byte, opts crypto.SignerOpts) ([]byte, error) {
	if err := signer.CheckSignerOpts(signer.Ed25519, message, opts); err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	return s.SignContext(ctx, message)
}

// SignContext sends msg to the app in ChunkSize chunks (SIGN_ED25519, P1
// the chunk's index from 1, P2 the number of chunks) and returns the
// app's signature, after checking it verifies under the public key. The
// app signs only well-formed tm2 sign bytes at rising height, round and
// step; it refuses others with a *StatusError. The first sign after the
// app starts waits for the user to confirm on the device, for as long as
// ctx allows.
func (s *Signer) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	if s.maxMsg > 0 && len(msg) > s.maxMsg {
		return nil, &MessageTooLargeError{Size: len(msg), Limit: s.maxMsg}
	}
	n := max(1, (len(msg)+s.chunk-1)/s.chunk)
	if n > maxPackets {
		return nil, fmt.Errorf("ledger: %d-byte message needs %d chunks of %d, more than %d: %w", len(msg), n, s.chunk, maxPackets, signer.ErrMessageTooLarge)
	}
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("ledger: waiting for the device: %w", ctx.Err())
	}
	defer func() { <-s.sem }()
	tr, err := s.transport(ctx)
	if err != nil {
		return nil, err
	}
	var resp []byte
	for i := range n {
		chunk := msg[min(i*s.chunk, len(msg)):min((i+1)*s.chunk, len(msg))]
		resp, err = s.exchange(ctx, tr, INSSignEd25519, command(INSSignEd25519, byte(i+1), byte(n), chunk))
		if err != nil {
			return nil, s.failed(tr, err)
		}
		if i < n-1 && len(resp) != 0 {
			return nil, s.failed(tr, fmt.Errorf("ledger: SIGN_ED25519 chunk %d/%d: %d bytes of data in an intermediate reply: %w", i+1, n, len(resp), signer.ErrProtocol))
		}
	}
	if len(resp) != signatureSize {
		return nil, s.failed(tr, fmt.Errorf("ledger: SIGN_ED25519: %d-byte signature, want %d: %w", len(resp), signatureSize, signer.ErrProtocol))
	}
	// A reply left over from an earlier exchange has the same shape as
	// this one; one that does not verify is never handed out.
	if !ed25519.Verify(s.pub, msg, resp) {
		return nil, s.failed(tr, fmt.Errorf("ledger: SIGN_ED25519: the reply does not verify for this message (a stale or corrupted reply): %w", signer.ErrProtocol))
	}
	return append([]byte(nil), resp...), nil
}

// transport returns the open transport, dialling a new one after a
// failure. The dial runs outside s.mu, so Close does not wait for it; a
// transport that comes up after Close is closed. Signs are serialised,
// so one dial runs at a time.
func (s *Signer) transport(ctx context.Context) (Transport, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, fmt.Errorf("ledger: %w", signer.ErrClosed)
	}
	if s.tr != nil {
		tr := s.tr
		s.mu.Unlock()
		return tr, nil
	}
	s.mu.Unlock()
	tr, err := s.dial(ctx)
	if err != nil {
		return nil, wrap("reconnecting", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		tr.Close()
		return nil, fmt.Errorf("ledger: %w", signer.ErrClosed)
	}
	s.tr = tr
	return tr, nil
}

// failed decides what an error means for the transport: a status word
// leaves it usable; anything else (a dead or hung device, a garbled reply,
// a cancelled exchange whose reply may still come) drops it, so the next
// sign dials afresh. After Close every error becomes ErrClosed.
func (s *Signer) failed(tr Transport, err error) error {
	var se *StatusError
	if errors.As(err, &se) {
		return err
	}
	s.mu.Lock()
	closed := s.closed
	if s.tr == tr {
		s.tr = nil
	}
	s.mu.Unlock()
	tr.Close()
	if closed {
		return fmt.Errorf("ledger: %w (during the sign: %s)", signer.ErrClosed, strings.TrimPrefix(err.Error(), prefix))
	}
	return err
}

// Close closes the transport. A sign in flight returns an error wrapping
// signer.ErrClosed; later calls return it at once. Close is idempotent.
func (s *Signer) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	tr := s.tr
	s.tr = nil
	s.mu.Unlock()
	if tr != nil {
		return tr.Close()
	}
	return nil
}

// prefix starts every error of this package, once.
const prefix = "ledger: "

// wrap returns err, from a transport or a dialer, as an error of this
// package: its text is "ledger: what: " and err's own text without a
// leading "ledger: ", so the prefix appears once, and it unwraps to err.
func wrap(what string, err error) error {
	msg := err.Error()
	rest, had := strings.CutPrefix(msg, prefix)
	if had && what == "" {
		return err
	}
	if what != "" {
		rest = what + ": " + rest
	}
	return &prefixedError{msg: prefix + rest, err: err}
}

type prefixedError struct {
	msg string
	err error
}

func (e *prefixedError) Error() string { return e.msg }
func (e *prefixedError) Unwrap() error { return e.err }
