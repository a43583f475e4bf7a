// Package signertest is the conformance suite that every signer.Signer in
// this module runs on itself, and that any other implementation can run
// too, in the manner of testing/fstest.TestFS.
//
// Run runs the checks as subtests; Check runs them and returns what failed.
// A backend runs the suite against its simulated device in its own tests,
// and against a real device when an environment variable opts in:
//
//	func TestConformance(t *testing.T) {
//		signertest.Run(t, func() (signer.Signer, error) {
//			return inprocess.Generate(signer.Ed25519)
//		}, signertest.Options{})
//	}
//
// Every signature the suite obtains is verified with the standard library
// (see VerifyStd). The suite checks:
//   - Public: non-nil, of the kind the algorithm needs, stable, and still
//     answered after Close (so it does no I/O);
//   - SignContext over payloads of 0, 1, 32 … 1024 bytes and 64 KiB (or up
//     to Options.MaxMessage, above which ErrMessageTooLarge is required),
//     with signatures of the right size that verify for their message only,
//     and the message left untouched;
//   - the crypto.Signer contract for the algorithm: pure Ed25519 with
//     crypto.Hash(0) and *ed25519.Options, Ed25519ph and Ed25519ctx either
//     right or refused with ErrUnsupported, deterministic Ed25519; ECDSA in
//     ASN.1 (low-S on secp256k1); RSA PKCS #1 v1.5 and PSS; a digest of the
//     wrong length refused;
//   - signs from Options.Concurrency goroutines at once (run it under
//     -race), and Close racing with signs in flight;
//   - a context cancelled or past its deadline before the call: an error
//     wrapping context.Canceled or context.DeadlineExceeded, nothing
//     reported to the trace (the suite's only window on device work, so a
//     backend must trace every exchange), and the signer still usable;
//   - a deadline honoured on a hung device, when Options.Hang can make one;
//   - Close idempotent, then ErrClosed from Sign and SignContext;
//   - trace reports that make sense: known stages, non-negative durations,
//     modeled stages naming their profile, measured stages that fit in the
//     call's wall time, and no report to a trace after its call returned.
package signertest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signer"
)

// Payloads are the message sizes, in bytes, that every backend signs.
var Payloads = []int{0, 1, 32, 64, 128, 256, 512, 1024}

// LargePayload is the size of the large message signed when the backend
// allows it (Options.MaxMessage is 0 or at least this).
const LargePayload = 64 << 10

// Factory opens a Signer for the suite. Each call may return the same key or
// a new one; the suite closes what it opens.
type Factory func() (signer.Signer, error)

// Options tunes the suite to a backend. The zero value suits a backend that
// signs any message of any length.
type Options struct {
	// Message returns a new message of about size bytes for the suite to
	// sign, for backends that sign only well-formed messages (such as the
	// Ledger validator app, which wants votes at rising heights). It must be
	// safe for concurrent use; a device that refuses heights out of order
	// also needs Concurrency 1. Every request the suite makes gets a
	// message of its own. Nil means random bytes of exactly size.
	Message func(size int) []byte

	// MaxMessage is the longest message the backend signs; 0 means at least
	// LargePayload. When set, a longer message must fail with an error
	// wrapping signer.ErrMessageTooLarge.
	MaxMessage int

	// Concurrency is the number of goroutines that sign at once; 0 means 8.
	Concurrency int

	// Hang, when set, makes the signer's device stop answering until
	// release is called. The suite then checks that SignContext returns
	// within its deadline while the device hangs, and signs again after
	// release.
	Hang func() (release func())

	// Timeout is the deadline of each call the suite makes, and bounds the
	// wait on a hung device; 0 means one minute. A backend that ignores its
	// context can still hang the suite, as it would hang its callers.
	Timeout time.Duration
	// Randomized says the backend's Ed25519 signatures are valid but not
	// deterministic: a threshold signer's R comes from its parties' fresh
	// nonces, so two signatures of one message differ. The suite then
	// skips its check that Sign and SignContext agree on one message and
	// keeps every other check (each signature must still verify).
	Randomized bool
}

func (o Options) concurrency() int {
	if o.Concurrency > 0 {
		return o.Concurrency
	}
	return 8
}

func (o Options) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return time.Minute
}

// check is one named part of the suite.
type check struct {
	name string
	run  func(c *checker)
}

var checks = []check{
	{"Public", checkPublic},
	{"SignContext", checkSignContext},
	{"MessageTooLarge", checkMaxMessage},
	{"CryptoSigner", checkCryptoSigner},
	{"MessageSigner", checkMessageSigner},
	{"Concurrent", checkConcurrent},
	{"Canceled", checkCanceled},
	{"Deadline", checkDeadline},
	{"Close", checkClose},
	{"CloseWhileSigning", checkCloseWhileSigning},
	{"Trace", checkTrace},
}

// Run runs the suite as subtests of t, one per check.
func Run(t *testing.T, open Factory, opts Options) {
	t.Helper()
	for _, ch := range checks {
		t.Run(ch.name, func(t *testing.T) {
			c := newChecker(open, opts)
			c.runCheck(ch)
			for _, e := range c.failures() {
				t.Error(e)
			}
			if c.skipped != "" && !t.Failed() {
				t.Skip(c.skipped)
			}
		})
	}
}

// Check runs the suite and returns nil if s conforms, or an error that lists
// every failure, each prefixed with the name of its check.
func Check(open Factory, opts Options) error {
	var errs []error
	for _, ch := range checks {
		c := newChecker(open, opts)
		c.runCheck(ch)
		for _, e := range c.failures() {
			errs = append(errs, fmt.Errorf("%s: %s", ch.name, e))
		}
	}
	return errors.Join(errs...)
}

// checker collects the failures of one check. Its methods are safe for
// concurrent use.
type checker struct {
	open Factory
	opts Options

	mu      sync.Mutex
	fails   []string
	skipped string               // why the check did not apply, if it did not
	cancels []context.CancelFunc // of the contexts callCtx made
}

func newChecker(open Factory, opts Options) *checker {
	return &checker{open: open, opts: opts}
}

// errFatal stops a check after a failure that makes the rest meaningless;
// errSkip stops one that does not apply to the backend.
var (
	errFatal = errors.New("fatal")
	errSkip  = errors.New("skip")
)

func (c *checker) runCheck(ch check) {
	defer func() {
		c.mu.Lock()
		for _, cancel := range c.cancels {
			cancel()
		}
		c.mu.Unlock()
	}()
	defer func() {
		if r := recover(); r != nil && r != errFatal && r != errSkip {
			c.errorf("panic: %v", r)
		}
	}()
	ch.run(c)
}

// skip stops a check that does not apply, saying why.
func (c *checker) skip(reason string) {
	c.mu.Lock()
	c.skipped = reason
	c.mu.Unlock()
	panic(errSkip)
}

// recoverPanic turns a panic in one of a check's goroutines into a failure.
func (c *checker) recoverPanic() {
	if r := recover(); r != nil && r != errFatal && r != errSkip {
		c.errorf("panic: %v", r)
	}
}

func (c *checker) errorf(format string, args ...any) {
	c.mu.Lock()
	c.fails = append(c.fails, fmt.Sprintf(format, args...))
	c.mu.Unlock()
}

func (c *checker) fatalf(format string, args ...any) {
	c.errorf(format, args...)
	panic(errFatal)
}

func (c *checker) failures() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.fails...)
}

// signerUnderTest is an opened signer with what the suite learned of it.
type signerUnderTest struct {
	signer.Signer
	alg signer.Algorithm
}

// openSigner opens a signer and learns its algorithm, or stops the check.
func (c *checker) openSigner() signerUnderTest {
	s, err := c.open()
	if err != nil {
		c.fatalf("open: %v", err)
	}
	if s == nil {
		c.fatalf("open returned a nil Signer and no error")
	}
	alg, err := signer.AlgorithmOf(s)
	if err != nil {
		s.Close()
		c.fatalf("AlgorithmOf: %v", err)
	}
	if !alg.Valid() {
		s.Close()
		c.fatalf("Algorithm() = %v, not a valid algorithm", alg)
	}
	return signerUnderTest{s, alg}
}

func (c *checker) message(size int) []byte {
	if c.opts.Message != nil {
		return c.opts.Message(size)
	}
	return randomBytes(size)
}

func (c *checker) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), c.opts.timeout())
}

// callCtx returns a context with the deadline of one call, cancelled when
// the check ends.
func (c *checker) callCtx() context.Context {
	ctx, cancel := c.ctx()
	c.mu.Lock()
	c.cancels = append(c.cancels, cancel)
	c.mu.Unlock()
	return ctx
}

// signAndVerify signs a fresh message of about size bytes and verifies it.
func (c *checker) signAndVerify(s signerUnderTest, size int, what string) bool {
	msg := c.message(size)
	kept := append([]byte(nil), msg...)
	ctx, cancel := c.ctx()
	defer cancel()
	sig, err := s.SignContext(ctx, msg)
	if err != nil {
		c.errorf("%s: SignContext(%d-byte message): %v", what, len(msg), err)
		return false
	}
	if string(kept) != string(msg) {
		c.errorf("%s: SignContext modified the message", what)
	}
	if err := VerifyStd(s.alg, s.Public(), msg, sig); err != nil {
		c.errorf("%s: %d-byte message: %v", what, len(msg), err)
		return false
	}
	if err := s.alg.Verify(s.Public(), msg, sig); err != nil {
		c.errorf("%s: %d-byte message: signer.Verify: %v", what, len(msg), err)
		return false
	}
	if len(msg) > 0 {
		other := append([]byte(nil), msg...)
		other[len(other)/2] ^= 0x01
		if VerifyStd(s.alg, s.Public(), other, sig) == nil {
			c.errorf("%s: signature also verifies for a different message", what)
			return false
		}
	}
	return true
}

func describe(err error) string {
	if err == nil {
		return "nil"
	}
	return strings.TrimSpace(err.Error())
}
