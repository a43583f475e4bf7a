package signertest

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"errors"
	"io"
	"sync"

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
		c.skip("Options.MaxMessage is 0: the backend takes messages of any length")
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
	// Every request gets a message of its own, for devices that refuse to
	// sign the same bytes twice (Options.Message).
	fresh := func() []byte { return c.message(c.size(100)) }
	msg := fresh()

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
		mustSign("Ed25519 with &ed25519.Options{}", noRand, fresh(), &ed25519.Options{})
		if c.opts.Message == nil && !c.opts.Randomized && a != nil {
			ctx, cancel := c.ctx()
			b, err := s.SignContext(ctx, msg)
			cancel()
			if err != nil {
				c.errorf("SignContext: %v", err)
			} else if !bytes.Equal(a, b) {
				c.errorf("Ed25519 signatures of one message differ (Sign against SignContext): Ed25519 is deterministic")
			}
		}
		ph := sha512.Sum512(fresh())
		optional("Ed25519ph", noRand, ph[:], &ed25519.Options{Hash: crypto.SHA512})
		optional("Ed25519ctx", noRand, fresh(), &ed25519.Options{Context: "signertest"})
		d := sha256.Sum256(fresh())
		refused("Ed25519 with opts crypto.SHA256", d[:], crypto.SHA256)
		if n := noRand.count(); n > 0 {
			c.errorf("Ed25519 Sign read rand %d times: Ed25519 is deterministic and must ignore rand", n)
		}
	case s.alg.IsECDSA():
		h := s.alg.Hash()
		d := s.alg.Digest(msg)
		mustSign("ECDSA over "+h.String(), rand.Reader, d, h)
		d = s.alg.Digest(fresh())
		refused("ECDSA digest one byte short", d[:len(d)-1], h)
		refused("ECDSA with opts crypto.Hash(0)", s.alg.Digest(fresh()), crypto.Hash(0))
	case s.alg.IsRSA():
		d := s.alg.Digest(msg)
		pkcs1 := crypto.SHA256
		pss := &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash, Hash: crypto.SHA256}
		other := s.alg.Digest(fresh())
		if s.alg == signer.RSAPSS {
			mustSign("RSA PSS over SHA-256", rand.Reader, d, pss)
			optional("RSA PKCS #1 v1.5 from a PSS key", rand.Reader, other, pkcs1)
		} else {
			mustSign("RSA PKCS #1 v1.5 over SHA-256", rand.Reader, d, pkcs1)
			optional("RSA PSS from a PKCS #1 v1.5 key", rand.Reader, other, pss)
		}
		d = s.alg.Digest(fresh())
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
