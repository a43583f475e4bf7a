package secretconn

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signerkit/signerkit/internal/benchtime"
	"go.uber.org/goleak"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

func TestMain(m *testing.M) {
	benchtime.Default(benchtime.Short)
	benchtime.Parallel(32) // the parallel tests wait rather than compute
	goleak.VerifyTestMain(m)
}

var variants = []Variant{Merlin, PreMerlin}

func key(seed byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, 32))
}

type transport struct {
	name string
	pair func(t testing.TB) (net.Conn, net.Conn)
}

var transports = []transport{
	{"pipe", func(testing.TB) (net.Conn, net.Conn) { return net.Pipe() }},
	{"tcp", tcpPair},
}

func tcpPair(t testing.TB) (net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type res struct {
		c   net.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() {
		c, err := ln.Accept()
		ch <- res{c, err}
	}()
	a, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	return a, r.c
}

type result struct {
	c   *Conn
	err error
}

// both runs Handshake on a and b at once.
func both(ctx context.Context, a, b net.Conn, ka, kb crypto.Signer, va, vb Variant) (result, result) {
	ch := make(chan result, 1)
	go func() {
		c, err := Handshake(ctx, b, kb, vb)
		if err != nil {
			b.Close() // as a caller must: the peer may wait for more
		}
		ch <- result{c, err}
	}()
	c, err := Handshake(ctx, a, ka, va)
	if err != nil {
		a.Close()
	}
	return result{c, err}, <-ch
}

func connected(t *testing.T, tr transport, v Variant) (*Conn, *Conn) {
	t.Helper()
	a, b := tr.pair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ra, rb := both(ctx, a, b, key(1), key(2), v, v)
	if ra.err != nil || rb.err != nil {
		t.Fatalf("handshake: %v / %v", ra.err, rb.err)
	}
	t.Cleanup(func() { ra.c.Close(); rb.c.Close() })
	return ra.c, rb.c
}

var sizes = []int{0, 1, 2, 31, 100, 1000, 1023, 1024, 1025, 1500, 2047, 2048, 2049, 3071, 3072, 3073, 4096, 5000, 10240, 16 * 1024, 16*1024 + 1, 70000}

func TestExchange(t *testing.T) {
	for _, tr := range transports {
		for _, v := range variants {
			t.Run(tr.name+"/"+v.String(), func(t *testing.T) {
				a, b := connected(t, tr, v)
				if !a.RemotePubKey().Equal(key(2).Public()) || !b.RemotePubKey().Equal(key(1).Public()) {
					t.Fatal("remote keys do not match the identities")
				}
				if a.Variant() != v {
					t.Fatal("variant")
				}
				rng := rand.New(rand.NewPCG(uint64(v), 7))
				for _, n := range sizes {
					// Both directions at once, so Read and Write race.
					ab, ba := make([]byte, n), make([]byte, n)
					for i := range ab {
						ab[i], ba[i] = byte(rng.Uint32()), byte(rng.Uint32())
					}
					var wg sync.WaitGroup
					send := func(c *Conn, p []byte) {
						defer wg.Done()
						if m, err := c.Write(p); err != nil || m != len(p) {
							t.Errorf("write %d: %d, %v", len(p), m, err)
						}
					}
					wg.Add(2)
					go send(a, ab)
					go send(b, ba)
					for _, x := range []struct {
						c    *Conn
						want []byte
					}{{b, ab}, {a, ba}} {
						got := make([]byte, n)
						if _, err := io.ReadFull(x.c, got); err != nil {
							t.Fatalf("read %d: %v", n, err)
						}
						if !bytes.Equal(got, x.want) {
							t.Fatalf("size %d: data differs", n)
						}
					}
					wg.Wait()
				}
			})
		}
	}
}

// A message of up to 1024 bytes written at once is read at once.
func TestMessageAtomic(t *testing.T) {
	a, b := connected(t, transports[1], Merlin)
	for _, n := range []int{1, 500, 1024} {
		msg := bytes.Repeat([]byte{byte(n)}, n)
		if _, err := a.Write(msg); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 4096)
		m, err := b.Read(buf)
		if err != nil || m != n {
			t.Fatalf("read %d: %d, %v", n, m, err)
		}
	}
	// A short buffer gets the rest of the frame next.
	if _, err := a.Write([]byte("abcdef")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if m, _ := b.Read(buf); string(buf[:m]) != "abcd" {
		t.Fatalf("got %q", buf[:m])
	}
	if m, _ := b.Read(buf); string(buf[:m]) != "ef" {
		t.Fatalf("got %q", buf[:m])
	}
	if m, err := b.Read(nil); m != 0 || err != nil {
		t.Fatal("empty read")
	}
}

// flipConn flips one bit of the next Write once armed.
type flipConn struct {
	net.Conn
	armed atomic.Bool
}

func (f *flipConn) Write(p []byte) (int, error) {
	if f.armed.CompareAndSwap(true, false) {
		p = bytes.Clone(p)
		p[len(p)/2] ^= 0x10
	}
	return f.Conn.Write(p)
}

func TestTamperedFrame(t *testing.T) {
	for _, v := range variants {
		t.Run(v.String(), func(t *testing.T) {
			pa, pb := net.Pipe()
			fa := &flipConn{Conn: pa}
			ra, rb := both(context.Background(), fa, pb, key(1), key(2), v, v)
			if ra.err != nil || rb.err != nil {
				t.Fatal(ra.err, rb.err)
			}
			defer ra.c.Close()
			defer rb.c.Close()
			fa.armed.Store(true)
			go ra.c.Write([]byte("pay me"))
			_, err := rb.c.Read(make([]byte, 64))
			if !errors.Is(err, signer.ErrProtocol) || !errors.Is(err, ErrBadFrame) {
				t.Fatalf("tampered frame: %v", err)
			}
			// The error sticks.
			if _, err2 := rb.c.Read(make([]byte, 64)); !errors.Is(err2, ErrBadFrame) {
				t.Fatalf("second read: %v", err2)
			}
		})
	}
}

// A frame out of order (here: replayed) fails too.
func TestReplayedFrame(t *testing.T) {
	a, b := connected(t, transports[1], Merlin)
	frame := make([]byte, 0, sealedFrameSize)
	plain := make([]byte, frameSize)
	plain[0] = 3
	frame = a.sendAEAD.Seal(frame, nonce(0), plain, nil) // nonce 0 was the auth message's
	if _, err := a.NetConn().Write(frame); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Read(make([]byte, 8)); !errors.Is(err, ErrBadFrame) {
		t.Fatalf("replayed frame: %v", err)
	}
}

func TestOversizedFrame(t *testing.T) {
	for _, n := range []uint32{dataMaxSize + 1, 1 << 31, 1<<32 - 1} {
		a, b := connected(t, transports[0], PreMerlin)
		plain := make([]byte, frameSize)
		plain[0], plain[1], plain[2], plain[3] = byte(n), byte(n>>8), byte(n>>16), byte(n>>24)
		frame := a.sendAEAD.Seal(nil, nonce(a.sendCount), plain, nil)
		go a.NetConn().Write(frame)
		_, err := b.Read(make([]byte, 8))
		if !errors.Is(err, signer.ErrProtocol) || !errors.Is(err, ErrFrameTooLarge) || !errors.Is(err, signer.ErrMessageTooLarge) {
			t.Fatalf("length %d: %v", n, err)
		}
	}
}

// A read deadline in the middle of a frame loses nothing.
func TestReadResumesAfterTimeout(t *testing.T) {
	a, b := connected(t, transports[1], Merlin)
	plain := make([]byte, frameSize)
	plain[0] = 5
	copy(plain[4:], "hello")
	frame := a.sendAEAD.Seal(nil, nonce(a.sendCount), plain, nil)
	a.sendCount++
	if _, err := a.NetConn().Write(frame[:500]); err != nil {
		t.Fatal(err)
	}
	b.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := b.Read(make([]byte, 8)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("want timeout, got %v", err)
	}
	b.SetReadDeadline(time.Time{})
	if _, err := a.NetConn().Write(frame[500:]); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8)
	n, err := b.Read(buf)
	if err != nil || string(buf[:n]) != "hello" {
		t.Fatalf("after timeout: %q, %v", buf[:n], err)
	}
}

func TestEOF(t *testing.T) {
	a, b := connected(t, transports[1], Merlin)
	a.Close()
	if _, err := b.Read(make([]byte, 8)); !errors.Is(err, io.EOF) {
		t.Fatalf("want EOF, got %v", err)
	}
}

// badSigner signs something other than the challenge.
type badSigner struct{ ed25519.PrivateKey }

func (s badSigner) Sign(r io.Reader, msg []byte, o crypto.SignerOpts) ([]byte, error) {
	return s.PrivateKey.Sign(r, append([]byte{0}, msg...), o)
}

func TestBadAuthSignature(t *testing.T) {
	for _, v := range variants {
		t.Run(v.String(), func(t *testing.T) {
			a, b := net.Pipe()
			ra, rb := both(context.Background(), a, b, key(1), badSigner{key(2)}, v, v)
			if ra.err == nil {
				t.Fatal("accepted a bad challenge signature")
			}
			for _, want := range []error{ErrAuthFailed, signer.ErrProtocol, signer.ErrInvalidSignature} {
				if !errors.Is(ra.err, want) {
					t.Fatalf("%v does not wrap %v", ra.err, want)
				}
			}
			if rb.c != nil {
				rb.c.Close()
			}
			a.Close()
		})
	}
}

func TestVariantMismatch(t *testing.T) {
	a, b := net.Pipe()
	ra, rb := both(context.Background(), a, b, key(1), key(2), Merlin, PreMerlin)
	if ra.err == nil || rb.err == nil {
		t.Fatalf("mismatched variants connected: %v / %v", ra.err, rb.err)
	}
	if !errors.Is(ra.err, signer.ErrProtocol) && !errors.Is(rb.err, signer.ErrProtocol) {
		t.Fatalf("no protocol error: %v / %v", ra.err, rb.err)
	}
	a.Close()
	b.Close()
}

func TestBadArguments(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if _, err := Handshake(context.Background(), a, key(1), 0); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Fatal(err)
	}
	if _, err := Handshake(context.Background(), a, nil, Merlin); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Handshake(ctx, a, key(1), Merlin); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}

// peer runs a script against Handshake on the other end of a pipe.
func runAgainst(t *testing.T, ctx context.Context, v Variant, script func(peer net.Conn)) error {
	t.Helper()
	return runAgainstOn(t, transports[0], ctx, v, script)
}

func runAgainstOn(t *testing.T, tr transport, ctx context.Context, v Variant, script func(peer net.Conn)) error {
	t.Helper()
	a, b := tr.pair(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		script(b)
	}()
	c, err := Handshake(ctx, a, key(1), v)
	a.Close()
	b.Close()
	<-done
	if c != nil {
		t.Fatal("handshake succeeded against a script")
	}
	return err
}

func drain(c net.Conn) { io.Copy(io.Discard, c) }

func TestHangingPeer(t *testing.T) {
	eph := func(c net.Conn) {
		go drain(c)
		c.Write(encodeEphKey(bytes.Repeat([]byte{9}, 32)))
	}
	scripts := map[string]func(net.Conn){
		"silent":          func(c net.Conn) { drain(c) },
		"half length":     func(c net.Conn) { go drain(c); c.Write([]byte{0x80}) },
		"half ephemeral":  func(c net.Conn) { go drain(c); c.Write(encodeEphKey(make([]byte, 32))[:10]) },
		"after ephemeral": func(c net.Conn) { eph(c) },
		"half frame": func(c net.Conn) {
			eph(c)
			c.Write(make([]byte, 100))
		},
	}
	// The cases run in parallel, each mostly waiting out its deadline, so
	// goroutines left behind are looked for once all of them have ended
	// (a cleanup of the parent runs after its parallel subtests), not
	// after each, which would see the others' as leaks.
	t.Cleanup(func() { goleak.VerifyNone(t) })
	for name, script := range scripts {
		for _, tr := range transports {
			for _, v := range variants {
				t.Run(name+"/"+tr.name+"/"+v.String(), func(t *testing.T) {
					t.Parallel()
					const d = 150 * time.Millisecond
					// Every try must end by its deadline (an error
					// wrapping DeadlineExceeded) and within hangBound,
					// which only catches a hang; the best of a few tries
					// must end within lateBound of the deadline, so that
					// one stall of a loaded CI machine (-race, these
					// cases in parallel) cannot fail the test, but a
					// handshake late by design (a poll, a wait for the
					// peer) does.
					const (
						lateBound = time.Second
						hangBound = 10 * time.Second
						tries     = 3
					)
					best := time.Duration(1<<63 - 1)
					for try := 0; try < tries && best > d+lateBound; try++ {
						ctx, cancel := context.WithTimeout(context.Background(), d)
						start := time.Now()
						err := runAgainstOn(t, tr, ctx, v, func(c net.Conn) {
							script(c)
							<-ctx.Done()
							time.Sleep(50 * time.Millisecond) // outlive the deadline
						})
						took := time.Since(start)
						cancel()
						if !errors.Is(err, context.DeadlineExceeded) {
							t.Fatalf("want DeadlineExceeded, got %v", err)
						}
						if took > hangBound {
							t.Fatalf("took %v", took)
						}
						best = min(best, took)
					}
					if best > d+lateBound {
						t.Fatalf("%d tries all took more than %v past the %v deadline (best %v)", tries, lateBound, d, best)
					}
				})
			}
		}
	}
}

func TestCancelMidHandshake(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	err := runAgainst(t, ctx, Merlin, func(c net.Conn) {
		go drain(c)
		c.Write(encodeEphKey(bytes.Repeat([]byte{9}, 32)))
		<-ctx.Done()
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want Canceled, got %v", err)
	}
}

// Garbage from the peer is a protocol error at once, without a deadline.
func TestGarbledHandshake(t *testing.T) {
	smallOrder := []byte{0xe0, 0xeb, 0x7a, 0x7c, 0x3b, 0x41, 0xb8, 0xae, 0x16, 0x56, 0xe3,
		0xfa, 0xf1, 0x9f, 0xc4, 0x6a, 0xda, 0x09, 0x8d, 0xeb, 0x9c, 0x32,
		0xb1, 0xfd, 0x86, 0x62, 0x05, 0x16, 0x5f, 0x49, 0xb8, 0x00}
	highBit := bytes.Clone(smallOrder)
	highBit[31] |= 0x80
	cases := []struct {
		name string
		wire []byte
		want error
	}{
		{"huge length", []byte{0xff, 0xff, 0xff, 0xff, 0x0f}, ErrMessageTooLarge},
		{"just over cap", appendDelimited(nil, make([]byte, maxHandshakeMsg+1)), ErrMessageTooLarge},
		{"varint overflow", bytes.Repeat([]byte{0xff}, 12), ErrMalformed},
		{"short key", encodeEphKey(make([]byte, 31)), ErrMalformed},
		{"long key", encodeEphKey(make([]byte, 33)), ErrMalformed},
		{"no key", appendDelimited(nil, nil), ErrMalformed},
		{"wrong wire type", appendDelimited(nil, []byte{0x08, 0x01}), ErrMalformed},
		{"group", appendDelimited(nil, []byte{0x0b}), ErrMalformed},
		{"zero key", encodeEphKey(make([]byte, 32)), ErrBadEphemeralKey},
		{"small order", encodeEphKey(smallOrder), ErrBadEphemeralKey},
		{"small order, top bit", encodeEphKey(highBit), ErrBadEphemeralKey},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := runAgainst(t, context.Background(), Merlin, func(c net.Conn) {
				go drain(c)
				c.Write(tc.wire)
			})
			if !errors.Is(err, signer.ErrProtocol) || !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
}

// A peer that echoes our ephemeral key back is refused.
func TestReflectedKey(t *testing.T) {
	err := runAgainst(t, context.Background(), Merlin, func(c net.Conn) {
		body, err := readDelimited(c, maxHandshakeMsg)
		if err != nil {
			return
		}
		go drain(c)
		c.Write(appendDelimited(nil, body))
	})
	if !errors.Is(err, ErrBadEphemeralKey) {
		t.Fatalf("got %v", err)
	}
}

// scripted runs our handshake on b with a replaced authentication message.
func scripted(t *testing.T, v Variant, msg func(challenge, sig []byte) []byte) error {
	t.Helper()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go func() {
		k := key(2)
		h := &handshake{conn: b, v: v, identity: k, locPub: k.Public().(ed25519.PublicKey), authMsg: msg}
		if _, err := h.run(); err != nil {
			b.Close()
		}
	}()
	c, err := Handshake(context.Background(), a, key(1), v)
	if c != nil {
		t.Fatal("handshake succeeded")
	}
	return err
}

func TestBadAuthMessage(t *testing.T) {
	pub := key(2).Public().(ed25519.PublicKey)
	secp := func(_, sig []byte) []byte {
		k := appendBytesField(nil, 2, make([]byte, 33))
		return appendDelimited(nil, appendBytesField(appendBytesField(nil, 1, k), 2, sig))
	}
	if err := scripted(t, Merlin, secp); !errors.Is(err, ErrUnsupportedKey) || !errors.Is(err, signer.ErrUnsupported) {
		t.Fatalf("secp256k1 key: %v", err)
	}
	// The other variant's encoding of the message.
	if err := scripted(t, Merlin, func(_, sig []byte) []byte { return encodeAuthSig(PreMerlin, pub, sig) }); !errors.Is(err, signer.ErrProtocol) {
		t.Fatalf("amino message on merlin: %v", err)
	}
	if err := scripted(t, PreMerlin, func(_, sig []byte) []byte { return encodeAuthSig(Merlin, pub, sig) }); !errors.Is(err, signer.ErrProtocol) {
		t.Fatalf("protobuf message on pre-merlin: %v", err)
	}
	// A valid signature under another key than the one sent.
	other := key(3)
	if err := scripted(t, Merlin, func(ch, _ []byte) []byte { return encodeAuthSig(Merlin, pub, ed25519.Sign(other, ch)) }); !errors.Is(err, ErrAuthFailed) {
		t.Fatalf("signature by another key: %v", err)
	}
	// No signature at all.
	if err := scripted(t, PreMerlin, func(_, _ []byte) []byte { return encodeAuthSig(PreMerlin, pub, nil) }); !errors.Is(err, ErrAuthFailed) {
		t.Fatalf("no signature: %v", err)
	}
	// Oversized inside the channel.
	if err := scripted(t, PreMerlin, func(_, _ []byte) []byte { return appendDelimited(nil, make([]byte, 5000)) }); !errors.Is(err, ErrMessageTooLarge) {
		t.Fatalf("oversized auth message: %v", err)
	}
}

func TestAuthSigRoundTrip(t *testing.T) {
	pub := key(4).Public().(ed25519.PublicKey)
	sig := bytes.Repeat([]byte{7}, 64)
	for _, v := range variants {
		msg := encodeAuthSig(v, pub, sig)
		body, err := readDelimited(bytes.NewReader(msg), maxHandshakeMsg)
		if err != nil {
			t.Fatal(err)
		}
		p, s, err := decodeAuthSig(v, body)
		if err != nil || !p.Equal(pub) || !bytes.Equal(s, sig) {
			t.Fatalf("%v: %v", v, err)
		}
	}
	// The sizes the vendors' encoders produce (see the package doc).
	if n := len(encodeAuthSig(Merlin, pub, sig)); n != 103 {
		t.Fatalf("merlin auth message is %d bytes", n)
	}
	if n := len(encodeAuthSig(PreMerlin, pub, sig)); n != 101 {
		t.Fatalf("pre-merlin auth message is %d bytes", n)
	}
	if n := len(encodeEphKey(make([]byte, 32))); n != 35 {
		t.Fatalf("ephemeral key message is %d bytes", n)
	}
}

// nonce is counter's nonce in a new buffer.
func nonce(counter uint64) []byte {
	var n [12]byte // chacha20poly1305.NonceSize
	return putNonce(&n, counter)
}

// A peer that claims a small-order identity key (or a non-canonical
// encoding of one) is refused before its signature is checked: under the
// identity key, R = identity and S = 0 verifies for every challenge.
func TestSmallOrderIdentityKey(t *testing.T) {
	forged := append([]byte{1}, make([]byte, 63)...) // R = identity, S = 0
	for _, v := range variants {
		for _, k := range signertest.SmallOrderEd25519Keys() {
			err := scripted(t, v, func(_, _ []byte) []byte { return encodeAuthSig(v, k, forged) })
			for _, want := range []error{ErrBadIdentityKey, signer.ErrInvalidKey, signer.ErrProtocol} {
				if !errors.Is(err, want) {
					t.Fatalf("%v, key %x: %v does not wrap %v", v, k, err, want)
				}
			}
		}
	}
}
