package signertest

import (
	"context"
	"crypto"
	"crypto/rand"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertrace"
)

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
		sig, err := s.SignContext(signertrace.WithTrace(ctx, rec.trace()), c.message(c.size(32)))
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
	if c.opts.Hang == nil {
		c.skip("Options.Hang is nil: no way to make the device hang (every other check signs under a deadline)")
	}
	s := c.openSigner()
	defer s.Close()
	const deadline = 300 * time.Millisecond
	release := c.opts.Hang()
	released := false
	defer func() {
		if !released {
			release()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
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
	n := min(4, c.opts.concurrency())
	var ready, started, done sync.WaitGroup
	var closing atomic.Bool        // set just before Close is called
	release := make(chan struct{}) // closed once every goroutine has signed once
	closed := make(chan struct{})  // closed once Close has returned
	for range n {
		ready.Add(1)
		started.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			defer c.recoverPanic()
			signalled, begun := false, false
			defer func() {
				if !signalled {
					ready.Done()
				}
				if !begun {
					started.Done()
				}
			}()
			// Sign until Close is called: it comes once every goroutine has
			// signed once and then begun signing again, so signs are in
			// flight when it does. Any of them may succeed or fail with
			// ErrClosed. A goroutine that has signed once waits for the
			// others to have too, rather than spin signing while they wait
			// for a CPU.
			for !closing.Load() {
				if signalled && !begun {
					begun = true
					started.Done()
				}
				msg := c.message(c.size(32))
				ctx, cancel := c.ctx()
				sig, err := s.SignContext(ctx, msg)
				cancel()
				switch {
				case errors.Is(err, signer.ErrClosed) && signalled:
					return
				case err != nil:
					c.errorf("sign racing Close: got %s, want a signature or, after Close, ErrClosed", describe(err))
					return
				}
				if err := VerifyStd(s.alg, s.Public(), msg, sig); err != nil {
					c.errorf("sign racing Close: %v", err)
				}
				if !signalled {
					signalled = true
					ready.Done()
					<-release
					continue
				}
				// Let a goroutine that has yet to begin its second sign
				// have the CPU now, not at the next preemption (10 ms on):
				// until it does, Close waits and this loop spins.
				runtime.Gosched()
			}
			// A sign that starts after Close returned must fail.
			<-closed
			ctx, cancel := c.ctx()
			defer cancel()
			if _, err := s.SignContext(ctx, c.message(c.size(32))); !errors.Is(err, signer.ErrClosed) {
				c.errorf("a sign that started after Close returned: got %s, want an error wrapping ErrClosed", describe(err))
			}
		}()
	}
	ready.Wait()
	close(release)
	started.Wait()
	closing.Store(true)
	if err := s.Close(); err != nil {
		c.errorf("Close while signing: %v", err)
	}
	close(closed)
	done.Wait()
}
