package openpgpcard

import (
	"context"
	"crypto"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/signerkit/signerkit/openpgpcard/internal/iso7816"
	"github.com/signerkit/signerkit/signer"
)

// Key names one of the card's three keys.
type Key uint8

const (
	// KeySign is the signature key, used by PSO:COMPUTE DIGITAL
	// SIGNATURE (PW1 verified in mode 81).
	KeySign Key = iota
	// KeyDecrypt is the decryption key, used by PSO:DECIPHER (PW1 in
	// mode 82). A Signer on it deciphers and does not sign.
	KeyDecrypt
	// KeyAuth is the authentication key, used by INTERNAL AUTHENTICATE
	// (PW1 in mode 82).
	KeyAuth
)

var keyNames = [...]string{"sig", "dec", "aut"}

// String returns "sig", "dec" or "aut", the names the URI uses.
func (k Key) String() string {
	if int(k) < len(keyNames) {
		return keyNames[k]
	}
	return fmt.Sprintf("Key(%d)", uint8(k))
}

// crt is the control reference template of each key.
var crt = [3]byte{0xB6, 0xB8, 0xA4}

// Config says how to reach the card and which key to use.
type Config struct {
	// Dial connects to the card; nil means PCSCDialer(Reader).
	Dial Dialer
	// Reader picks the PC/SC reader whose name contains it; empty means
	// the first reader holding an OpenPGP card. Only with a nil Dial.
	Reader string
	// Key is the key to use; the zero value is KeySign.
	Key Key
	// PIN gives PW1, the user PIN, verified at open and whenever the card
	// asks again (a card whose PW1 status byte is 00 wants it before each
	// signature). Nil opens the key without a PIN: reading its public key
	// works, and signing fails with an error wrapping
	// signer.ErrPermissionDenied.
	PIN signer.Secret
	// AdminPIN gives PW3, the admin PIN, which only Generate and
	// Store.GenerateKey use.
	AdminPIN signer.Secret
	// SignTimeout bounds Sign, which takes no context; zero means
	// DefaultSignTimeout.
	SignTimeout time.Duration
}

// DefaultSignTimeout bounds Sign when Config.SignTimeout is zero: long
// enough for a 4096-bit RSA key on a slow token (about 8 s on an FST-01).
const DefaultSignTimeout = 30 * time.Second

func (c Config) dialer() (Dialer, error) {
	if c.Key > KeyAuth {
		return nil, fmt.Errorf("openpgpcard: Config.Key %d is not sig, dec or aut: %w", c.Key, signer.ErrInvalidArgument)
	}
	if c.Dial == nil {
		return PCSCDialer(c.Reader), nil
	}
	if c.Reader != "" {
		return nil, fmt.Errorf("openpgpcard: Config.Reader is set with Config.Dial: %w", signer.ErrInvalidArgument)
	}
	return c.Dial, nil
}

// Signer is one of the card's keys as a signer.Signer, and as a
// crypto.Decrypter for the decryption key. Commands go to the card one at
// a time; a Signer is safe for concurrent use.
type Signer struct {
	cfg     Config
	dial    Dialer
	alg     signer.Algorithm
	attr    Attributes
	pub     crypto.PublicKey
	timeout time.Duration

	sem chan struct{} // one command sequence at a time

	mu     sync.Mutex
	l      *link // nil after a failure, until the next dial
	closed bool

	// Guarded by sem:
	verified bool // PW1 verified on l, in the mode the key needs
	multi    bool // the card keeps PW1 verified for several signatures
}

var (
	_ signer.AlgorithmSigner = (*Signer)(nil)
	_ crypto.Decrypter       = (*Signer)(nil)
)

// Open connects to the card, selects the OpenPGP application, reads the
// key's attributes and public key (so Public never does I/O) and, with a
// PIN, verifies it. Errors wrap signer.ErrDeviceNotFound (no reader or
// card), signer.ErrAppNotOpen (no OpenPGP application), signer.ErrKeyNotFound
// (no key in the slot), signer.ErrUnsupported (an algorithm this package
// does not use, or PC/SC in a build without cgo), signer.ErrWrongPassphrase
// (a wrong PIN: a *StatusError tells the tries left) or
// signer.ErrDeviceLocked (the PIN is blocked).
func Open(ctx context.Context, cfg Config) (*Signer, error) {
	dial, err := cfg.dialer()
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("openpgpcard: %w", err)
	}
	s := &Signer{cfg: cfg, dial: dial, sem: make(chan struct{}, 1)}
	s.timeout = cfg.SignTimeout
	if s.timeout <= 0 {
		s.timeout = DefaultSignTimeout
	}
	l, info, err := connect(ctx, dial)
	if err != nil {
		return nil, err
	}
	s.attr = info.attrs[cfg.Key]
	s.multi = info.pw1Multi
	if err := s.readKey(ctx, l); err != nil {
		l.tr.Close()
		return nil, err
	}
	s.l = l
	if cfg.PIN != nil {
		if err := s.verify(ctx, l); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// readKey reads the public key and checks it against the attributes.
func (s *Signer) readKey(ctx context.Context, l *link) error {
	resp, err := l.transmit(ctx, "READ PUBLIC KEY", iso7816.Command{INS: 0x47, P1: 0x81, Data: []byte{crt[s.cfg.Key], 0x00}})
	if err != nil {
		return err
	}
	pub, err := s.attr.parsePublic(resp)
	if err != nil {
		return err
	}
	s.pub = pub
	s.alg = s.attr.signerAlgorithm()
	return nil
}

// Public returns the key's public key, read at open: an ed25519.PublicKey,
// *ecdsa.PublicKey, *rsa.PublicKey, or for an ECDH decryption key an
// *ecdh.PublicKey.
func (s *Signer) Public() crypto.PublicKey { return clonePublic(s.pub) }

// Algorithm returns the algorithm SignContext uses: signer.Ed25519,
// signer.ECDSAP256 or signer.RSAPKCS1v15 (the card pads PKCS #1 v1.5
// itself and cannot make PSS). A decryption key without a signature
// algorithm reports 0.
func (s *Signer) Algorithm() signer.Algorithm { return s.alg }

// Attributes returns the key's algorithm attributes as the card reports
// them.
func (s *Signer) Attributes() Attributes { return s.attr }

// acquire waits for the command slot and returns the link, dialling and
// selecting afresh after a failure.
func (s *Signer) acquire(ctx context.Context) (*link, error) {
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("openpgpcard: waiting for the card: %w", ctx.Err())
	}
	s.mu.Lock()
	closed, l := s.closed, s.l
	s.mu.Unlock()
	if closed {
		<-s.sem
		return nil, fmt.Errorf("openpgpcard: %w", signer.ErrClosed)
	}
	if l != nil {
		return l, nil
	}
	l, info, err := connect(ctx, s.dial)
	if err != nil {
		<-s.sem
		return nil, err
	}
	if info.attrs[s.cfg.Key] != s.attr {
		l.tr.Close()
		<-s.sem
		return nil, fmt.Errorf("openpgpcard: the %v key's attributes changed since open (another card, or the key replaced): %w", s.cfg.Key, signer.ErrKeyNotFound)
	}
	s.multi, s.verified = info.pw1Multi, false
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		l.tr.Close()
		<-s.sem
		return nil, fmt.Errorf("openpgpcard: %w", signer.ErrClosed)
	}
	s.l = l
	s.mu.Unlock()
	return l, nil
}

// release gives the command slot back; after a transport error it drops
// the link so the next command dials again.
func (s *Signer) release(l *link, err error) error {
	defer func() { <-s.sem }()
	if err == nil || !isTransportError(err) && ctxErr(err) == nil {
		return err
	}
	s.mu.Lock()
	closed := s.closed
	if s.l == l {
		s.l = nil
	}
	s.mu.Unlock()
	l.tr.Close()
	s.verified = false
	if closed {
		return fmt.Errorf("openpgpcard: %w (during the command: %s)", signer.ErrClosed, trimPrefix(err.Error()))
	}
	return err
}

// verify sends PW1 in the mode the key needs.
func (s *Signer) verify(ctx context.Context, l *link) error {
	if s.cfg.PIN == nil {
		return fmt.Errorf("openpgpcard: no PIN configured for the %v key: %w", s.cfg.Key, signer.ErrPermissionDenied)
	}
	pin, err := s.cfg.PIN()
	if err != nil {
		return fmt.Errorf("openpgpcard: PIN: %w", err)
	}
	defer clear(pin)
	p2 := byte(0x82)
	if s.cfg.Key == KeySign {
		p2 = 0x81
	}
	if _, err := l.transmit(ctx, "VERIFY", iso7816.Command{INS: 0x20, P2: p2, Data: pin}); err != nil {
		return err
	}
	s.verified = true
	return nil
}

// Close closes the transport. A command in flight returns an error
// wrapping signer.ErrClosed; later calls return it at once. Close is
// idempotent.
func (s *Signer) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	l := s.l
	s.l = nil
	s.mu.Unlock()
	if l != nil {
		return l.tr.Close()
	}
	return nil
}

const prefix = "openpgpcard: "

func trimPrefix(s string) string { return strings.TrimPrefix(s, prefix) }
