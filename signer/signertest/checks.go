package signertest

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/signerkit/signerkit/signer"
)

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// equalKey compares public keys through their Equal methods.
func equalKey(a, b crypto.PublicKey) bool {
	k, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && k.Equal(b)
}

func checkPublic(c *checker) {
	s := c.openSigner()
	pub := s.Public()
	if pub == nil {
		s.Close()
		c.fatalf("Public() = nil")
	}
	if err := s.alg.CheckKey(pub); err != nil {
		c.errorf("Public() does not fit algorithm %v: %v", s.alg, err)
	}
	if !equalKey(pub, s.Public()) {
		c.errorf("Public() changed between two calls")
	}
	c.signAndVerify(s, c.size(32), "sign before Close")
	if err := s.Close(); err != nil {
		c.errorf("Close: %v", err)
	}
	if !equalKey(pub, s.Public()) {
		c.errorf("Public() after Close differs from before: Public must not do I/O")
	}
}

// size returns n, or Options.MaxMessage when that is smaller.
func (c *checker) size(n int) int {
	if m := c.opts.MaxMessage; m > 0 && n > m {
		return m
	}
	return n
}

// payloads returns the sizes to sign: Payloads and LargePayload, less those
// above Options.MaxMessage.
func (c *checker) payloads() []int {
	var sizes []int
	for _, n := range append(append([]int(nil), Payloads...), LargePayload) {
		if m := c.opts.MaxMessage; m == 0 || n <= m {
			sizes = append(sizes, n)
		}
	}
	return sizes
}

func checkSignContext(c *checker) {
	s := c.openSigner()
	defer s.Close()
	for _, size := range c.payloads() {
		c.signAndVerify(s, size, "payload")
	}
}

func checkMaxMessage(c *checker) {
	if c.opts.MaxMessage == 0 {
		return
	}
	s := c.openSigner()
	defer s.Close()
	c.signAndVerify(s, c.opts.MaxMessage, "message of MaxMessage bytes")
	msg := c.message(c.opts.MaxMessage + 1)
	if len(msg) <= c.opts.MaxMessage {
		c.errorf("Options.Message(%d) returned only %d bytes; cannot check the limit", c.opts.MaxMessage+1, len(msg))
		return
	}
	ctx, cancel := c.ctx()
	defer cancel()
	_, err := s.SignContext(ctx, msg)
	if !errors.Is(err, signer.ErrMessageTooLarge) {
		c.errorf("SignContext(%d bytes) with MaxMessage %d: got %s, want an error wrapping ErrMessageTooLarge", len(msg), c.opts.MaxMessage, describe(err))
	}
	c.signAndVerify(s, c.size(32), "sign after a refused message")
}

// failingReader makes sure Ed25519 ignores rand, as crypto/ed25519 does:
// it fails every read and counts them, so a signer that reads and ignores
// the error is caught too.
type failingReader struct {
	mu    sync.Mutex
	reads int
}

func (r *failingReader) Read([]byte) (int, error) {
	r.mu.Lock()
	r.reads++
	r.mu.Unlock()
	return 0, errors.New("rand must not be read")
}

func (r *failingReader) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reads
}

func checkCryptoSigner(c *checker) {
	s := c.openSigner()
	defer s.Close()
	pub := s.Public()
	msg := c.message(c.size(100))

	// sign calls Sign and verifies the result with the standard library.
	sign := func(what string, rnd io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
		sig, err := s.Sign(rnd, digest, opts)
		if err != nil {
			return nil, err
		}
		if verr := verifySignerOpts(s.alg, pub, digest, sig, opts); verr != nil {
			c.errorf("%s: signature does not verify: %v", what, verr)
		}
		return sig, nil
	}
	mustSign := func(what string, rnd io.Reader, digest []byte, opts crypto.SignerOpts) []byte {
		sig, err := sign(what, rnd, digest, opts)
		if err != nil {
			c.errorf("%s: %v", what, err)
		}
		return sig
	}
	// optional accepts a signature that verifies or an error wrapping
	// ErrUnsupported.
	noRand := &failingReader{}
	optional := func(what string, rnd io.Reader, digest []byte, opts crypto.SignerOpts) {
		if _, err := sign(what, rnd, digest, opts); err != nil && !errors.Is(err, signer.ErrUnsupported) {
			c.errorf("%s: got %s, want a valid signature or an error wrapping ErrUnsupported", what, describe(err))
		}
	}
	refused := func(what string, digest []byte, opts crypto.SignerOpts) {
		if sig, err := s.Sign(rand.Reader, digest, opts); err == nil {
			c.errorf("%s: got a %d-byte signature, want an error", what, len(sig))
		}
	}

	switch {
	case s.alg == signer.Ed25519:
		a := mustSign("Ed25519 with crypto.Hash(0) and a rand that fails", noRand, msg, crypto.Hash(0))
		mustSign("Ed25519 with &ed25519.Options{}", noRand, msg, &ed25519.Options{})
		if c.opts.Message == nil && a != nil {
			ctx, cancel := c.ctx()
			b, err := s.SignContext(ctx, msg)
			cancel()
			if err != nil {
				c.errorf("SignContext: %v", err)
			} else if !bytes.Equal(a, b) {
				c.errorf("Ed25519 signatures of one message differ (Sign against SignContext): Ed25519 is deterministic")
			}
		}
		ph := sha512.Sum512(msg)
		optional("Ed25519ph", noRand, ph[:], &ed25519.Options{Hash: crypto.SHA512})
		optional("Ed25519ctx", noRand, msg, &ed25519.Options{Context: "signertest"})
		d := sha256.Sum256(msg)
		refused("Ed25519 with opts crypto.SHA256", d[:], crypto.SHA256)
		if n := noRand.count(); n > 0 {
			c.errorf("Ed25519 Sign read rand %d times: Ed25519 is deterministic and must ignore rand", n)
		}
	case s.alg.IsECDSA():
		h := s.alg.Hash()
		d := s.alg.Digest(msg)
		mustSign("ECDSA over "+h.String(), rand.Reader, d, h)
		refused("ECDSA digest one byte short", d[:len(d)-1], h)
		refused("ECDSA with opts crypto.Hash(0)", d, crypto.Hash(0))
	case s.alg.IsRSA():
		d := s.alg.Digest(msg)
		pkcs1 := crypto.SHA256
		pss := &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash, Hash: crypto.SHA256}
		if s.alg == signer.RSAPSS {
			mustSign("RSA PSS over SHA-256", rand.Reader, d, pss)
			optional("RSA PKCS #1 v1.5 from a PSS key", rand.Reader, d, pkcs1)
		} else {
			mustSign("RSA PKCS #1 v1.5 over SHA-256", rand.Reader, d, pkcs1)
			optional("RSA PSS from a PKCS #1 v1.5 key", rand.Reader, d, pss)
		}
		refused("RSA digest one byte short", d[:len(d)-1], crypto.SHA256)
	}
}

func checkConcurrent(c *checker) {
	s := c.openSigner()
	defer s.Close()
	n := c.opts.concurrency()
	sizes := c.payloads()
	var wg sync.WaitGroup
	for g := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.recoverPanic()
			for i := range 4 {
				c.signAndVerify(s, sizes[(g+i)%len(sizes)], "concurrent sign")
			}
			_ = s.Public()
		}()
	}
	wg.Wait()
}

// recorder keeps every trace report it gets.
type recorder struct {
	mu       sync.Mutex
	stages   []signer.StageInfo
	counts   map[signer.Counter]int64
	calls    int // hook calls of either kind
	negative []signer.Counter
}

func (r *recorder) trace() *signer.Trace {
	return &signer.Trace{
		StageDone: func(i signer.StageInfo) {
			r.mu.Lock()
			r.stages = append(r.stages, i)
			r.calls++
			r.mu.Unlock()
		},
		Count: func(k signer.Counter, n int64) {
			r.mu.Lock()
			if r.counts == nil {
				r.counts = make(map[signer.Counter]int64)
			}
			r.counts[k] += n
			r.calls++
			if n < 0 {
				r.negative = append(r.negative, k)
			}
			r.mu.Unlock()
		},
	}
}

func (r *recorder) reports() (int, []signer.StageInfo, map[signer.Counter]int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	counts := make(map[signer.Counter]int64, len(r.counts))
	for k, v := range r.counts {
		counts[k] = v
	}
	return r.calls, append([]signer.StageInfo(nil), r.stages...), counts
}

func checkCanceled(c *checker) {
	s := c.openSigner()
	defer s.Close()
	cases := []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		want error
	}{
		{"cancelled context", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}, context.Canceled},
		{"context past its deadline", func() (context.Context, context.CancelFunc) {
			return context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		}, context.DeadlineExceeded},
	}
	for _, tc := range cases {
		var rec recorder
		ctx, cancel := tc.ctx()
		sig, err := s.SignContext(signer.WithTrace(ctx, rec.trace()), c.message(c.size(32)))
		cancel()
		if !errors.Is(err, tc.want) {
			c.errorf("%s: got %s, want an error wrapping %v", tc.name, describe(err), tc.want)
		}
		if sig != nil {
			c.errorf("%s: returned a signature with the error", tc.name)
		}
		if n, stages, _ := rec.reports(); n != 0 {
			c.errorf("%s: %d trace reports (first %v): a done context must not reach the device", tc.name, n, stages)
		}
	}
	c.signAndVerify(s, c.size(32), "sign after cancelled calls")
}

func checkDeadline(c *checker) {
	s := c.openSigner()
	defer s.Close()
	// A deadline in the future does not get in the way.
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.timeout())
	msg := c.message(c.size(64))
	sig, err := s.SignContext(ctx, msg)
	cancel()
	if err != nil {
		c.errorf("SignContext with a %v deadline: %v", c.opts.timeout(), err)
	} else if err := VerifyStd(s.alg, s.Public(), msg, sig); err != nil {
		c.errorf("SignContext with a deadline: %v", err)
	}
	if c.opts.Hang == nil {
		return
	}
	const deadline = 300 * time.Millisecond
	release := c.opts.Hang()
	released := false
	defer func() {
		if !released {
			release()
		}
	}()
	ctx, cancel = context.WithTimeout(context.Background(), deadline)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		defer c.recoverPanic()
		_, err := s.SignContext(ctx, c.message(c.size(64)))
		done <- err
	}()
	// The bound is generous: this checks that the call returns at all once
	// its deadline passes, not how fast.
	slack := min(10*time.Second, c.opts.timeout())
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			c.errorf("sign on a hung device: got %s, want an error wrapping context.DeadlineExceeded", describe(err))
		}
	case <-time.After(deadline + slack):
		c.errorf("sign on a hung device did not return within %v after its %v deadline", slack, deadline)
	}
	release()
	released = true
	c.signAndVerify(s, c.size(64), "sign after the device answers again")
}

func checkClose(c *checker) {
	s := c.openSigner()
	pub := s.Public()
	if err := s.Close(); err != nil {
		c.errorf("first Close: %v", err)
	}
	if err := s.Close(); err != nil {
		c.errorf("second Close: %v (Close must be idempotent)", err)
	}
	ctx, cancel := c.ctx()
	defer cancel()
	if _, err := s.SignContext(ctx, c.message(c.size(32))); !errors.Is(err, signer.ErrClosed) {
		c.errorf("SignContext after Close: got %s, want an error wrapping ErrClosed", describe(err))
	}
	msg := c.message(c.size(32))
	var d []byte
	var opts crypto.SignerOpts = s.alg.SignerOpts()
	if s.alg == signer.Ed25519 {
		d = msg
	} else {
		d = s.alg.Digest(msg)
	}
	if _, err := s.Sign(rand.Reader, d, opts); !errors.Is(err, signer.ErrClosed) {
		c.errorf("Sign after Close: got %s, want an error wrapping ErrClosed", describe(err))
	}
	if !equalKey(pub, s.Public()) {
		c.errorf("Public() changed after Close")
	}
}

func checkCloseWhileSigning(c *checker) {
	s := c.openSigner()
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.recoverPanic()
			<-start
			for range 4 {
				msg := c.message(c.size(32))
				ctx, cancel := c.ctx()
				sig, err := s.SignContext(ctx, msg)
				cancel()
				switch {
				case errors.Is(err, signer.ErrClosed):
					return
				case err != nil:
					c.errorf("sign racing Close: got %s, want a signature or ErrClosed", describe(err))
					return
				}
				if err := VerifyStd(s.alg, s.Public(), msg, sig); err != nil {
					c.errorf("sign racing Close: %v", err)
				}
			}
		}()
	}
	close(start)
	if err := s.Close(); err != nil {
		c.errorf("Close while signing: %v", err)
	}
	wg.Wait()
}

func checkTrace(c *checker) {
	s := c.openSigner()
	defer s.Close()
	var rec recorder
	msg := c.message(c.size(128))
	ctx, cancel := c.ctx()
	defer cancel()
	begin := time.Now()
	sig, err := s.SignContext(signer.WithTrace(ctx, rec.trace()), msg)
	wall := time.Since(begin)
	if err != nil {
		c.fatalf("traced SignContext: %v", err)
	}
	if err := VerifyStd(s.alg, s.Public(), msg, sig); err != nil {
		c.errorf("traced SignContext: %v", err)
	}
	n, stages, _ := rec.reports()
	if len(stages) == 0 {
		c.errorf("no stage was reported: every sign reports at least its sign, device or transport stage")
	}
	var measured, slept, transport time.Duration
	core := false
	for _, i := range stages {
		known := false
		for _, st := range signer.Stages() {
			known = known || i.Stage == st
		}
		if !known {
			c.errorf("unknown stage %v reported", i.Stage)
		}
		if i.Duration < 0 {
			c.errorf("stage %v reported a negative duration %v", i.Stage, i.Duration)
		}
		switch i.Source {
		case signer.Measured:
			measured += i.Duration
			if i.Slept || i.Profile != "" {
				c.errorf("measured stage %v carries Slept or a Profile, which only modeled stages have", i.Stage)
			}
			if i.Stage == signer.StageTransport {
				transport += i.Duration
			}
		case signer.Modeled:
			if i.Profile == "" {
				c.errorf("modeled stage %v names no profile", i.Stage)
			}
			if i.Slept {
				slept += i.Duration
			}
		default:
			c.errorf("stage %v has unknown source %v", i.Stage, i.Source)
		}
		switch i.Stage {
		case signer.StageSign, signer.StageDevice, signer.StageTransport:
			core = true
		}
	}
	if len(stages) > 0 && !core {
		c.errorf("stages %v include none of sign, device, transport", stages)
	}
	if measured > wall {
		c.errorf("measured stages add up to %v, more than the call's wall time %v: stages overlap or are not measured inside the call", measured, wall)
	}
	if slept > transport {
		c.errorf("modeled stages slept %v, more than the measured transport %v that must contain them", slept, transport)
	}
	rec.mu.Lock()
	negative := rec.negative
	rec.mu.Unlock()
	for _, k := range negative {
		c.errorf("counter %v was given a negative increment: counters only grow", k)
	}
	// A backend must not keep a trace past its call.
	c.signAndVerify(s, c.size(32), "untraced sign")
	if after, _, _ := rec.reports(); after != n {
		c.errorf("the trace of an earlier call got %d reports from a later call without it", after-n)
	}
}
