package signertest

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// Fake is an in-memory Ed25519 signer.Signer for the tests of what sits in
// front of a signer (a guard, a privval server, the daemon). It counts its
// signs, and on demand delays them, fails them or holds each one until the
// test releases it. Its methods are safe for concurrent use.
//
// A sign on a closed Fake fails with signer.ErrClosed; one whose context
// has ended fails with the context's error before it starts (a delay or a
// hold then ignores the context, as a device mid-operation would).
type Fake struct {
	priv   ed25519.PrivateKey
	signs  atomic.Int64
	closed atomic.Bool
	delay  atomic.Int64 // a time.Duration

	mu      sync.Mutex
	err     error
	entered chan struct{}
	release chan struct{}
}

var (
	_ signer.Signer        = (*Fake)(nil)
	_ crypto.MessageSigner = (*Fake)(nil)
)

// NewFake returns a Fake whose key has the 32-byte seed of seed repeated,
// so that two Fakes of one seed hold the same key.
func NewFake(seed byte) *Fake {
	return NewFakeKey(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize)))
}

// NewFakeKey returns a Fake that signs with priv.
func NewFakeKey(priv ed25519.PrivateKey) *Fake { return &Fake{priv: priv} }

// Public returns the Ed25519 public key.
func (f *Fake) Public() crypto.PublicKey { return f.priv.Public() }

// PublicKey is Public as an ed25519.PublicKey.
func (f *Fake) PublicKey() ed25519.PublicKey { return f.priv.Public().(ed25519.PublicKey) }

// Sign keeps crypto/ed25519's contract for opts (Ed25519, Ed25519ph,
// Ed25519ctx); otherwise it is SignContext with context.Background.
func (f *Fake) Sign(_ io.Reader, msg []byte, opts crypto.SignerOpts) ([]byte, error) {
	if err := f.begin(context.Background()); err != nil {
		return nil, err
	}
	sig, err := f.priv.Sign(nil, msg, opts)
	if err != nil {
		return nil, err
	}
	f.signs.Add(1)
	return sig, nil
}

// SignMessage is crypto.MessageSigner's, through signer.SignMessage.
func (f *Fake) SignMessage(_ io.Reader, msg []byte, opts crypto.SignerOpts) ([]byte, error) {
	return signer.SignMessage(f, msg, opts)
}

// SignContext signs msg unless the Fake is closed, ctx has ended or SetErr
// has set an error; it waits out SetDelay's delay and Hold's release
// first, and counts the signs it makes. A trace in ctx sees one
// signertrace.StageSign.
func (f *Fake) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	if err := f.begin(ctx); err != nil {
		return nil, err
	}
	tr, start := signertrace.ContextTrace(ctx), time.Now()
	sig := ed25519.Sign(f.priv, msg)
	tr.Measured(signertrace.StageSign, start)
	f.signs.Add(1)
	return sig, nil
}

// begin is what a sign does before it signs.
func (f *Fake) begin(ctx context.Context) error {
	if f.closed.Load() {
		return signer.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	err, entered, release := f.err, f.entered, f.release
	f.mu.Unlock()
	if err != nil {
		return err
	}
	if entered != nil {
		entered <- struct{}{}
		<-release
	}
	if d := time.Duration(f.delay.Load()); d > 0 {
		time.Sleep(d)
	}
	return nil
}

// Close marks the Fake closed; later signs fail with signer.ErrClosed.
func (f *Fake) Close() error {
	f.closed.Store(true)
	return nil
}

// Signs returns the number of signatures made.
func (f *Fake) Signs() int64 { return f.signs.Load() }

// Closed reports whether Close has been called.
func (f *Fake) Closed() bool { return f.closed.Load() }

// SetDelay makes each later sign take d longer (0: none).
func (f *Fake) SetDelay(d time.Duration) { f.delay.Store(int64(d)) }

// SetErr makes each later sign fail with err, as an unplugged device's
// would; SetErr(nil) lets them succeed again.
func (f *Fake) SetErr(err error) {
	f.mu.Lock()
	f.err = err
	f.mu.Unlock()
}

// Hold makes each later sign wait: it sends on entered as it starts, then
// waits until the test sends on release or closes it (closing releases
// every sign). entered has a buffer of one.
func (f *Fake) Hold() (entered <-chan struct{}, release chan<- struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.entered, f.release = make(chan struct{}, 1), make(chan struct{})
	return f.entered, f.release
}

// Verify fails t unless sig is the Fake's valid signature of msg.
func (f *Fake) Verify(t testing.TB, msg, sig []byte) {
	t.Helper()
	if !ed25519.Verify(f.PublicKey(), msg, sig) {
		t.Fatalf("signature %x does not verify over %x", sig, msg)
	}
}
