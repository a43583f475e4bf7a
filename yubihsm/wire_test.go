package yubihsm_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/yubihsm"
	"github.com/signerkit/signerkit/yubihsm/yubihsmsim"
)

// Tests of what a sign does with answers the device never sends, or
// that never arrive, through a transport that replaces or loses them.

// simTransport serves a simulated device in process and can replace the
// next response body with other bytes.
type simTransport struct {
	h        http.Handler
	mu       sync.Mutex
	override []byte
	armed    bool
	lose     bool // drop the next response: the device ran the command, no answer comes back
}

func (s *simTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	s.h.ServeHTTP(rec, req)
	resp := rec.Result()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lose && req.Method == http.MethodPost {
		s.lose = false
		return nil, errors.New("simTransport: the answer was lost")
	}
	if s.armed && req.Method == http.MethodPost {
		s.armed = false
		resp.Body = io.NopCloser(bytes.NewReader(s.override))
		resp.ContentLength = int64(len(s.override))
	}
	return resp, nil
}

// simKey opens an Ed25519 key on a simulated device served through a
// simTransport, without keepalive pings; both close when tb ends.
func simKey(tb testing.TB) (*yubihsmsim.Device, *simTransport, *yubihsm.Signer) {
	tb.Helper()
	dev := yubihsmsim.New(yubihsmsim.Config{})
	rt := &simTransport{h: dev.Handler()}
	cfg := config("http://sim.invalid")
	cfg.HTTPClient, cfg.KeepAlive = &http.Client{Transport: rt}, -1
	st := openStore(tb, cfg)
	return dev, rt, openSigner(tb, st, generate(tb, st, signer.Ed25519, "simkey").Ref())
}

func (s *simTransport) arm(b []byte) {
	s.mu.Lock()
	s.override, s.armed = b, true
	s.mu.Unlock()
}

// FuzzSessionResponse replaces the device's answer to a sign with
// arbitrary bytes: the sign must fail with a typed error (or, if the bytes
// happen to be right, succeed), never panic, and the next sign must work.
func FuzzSessionResponse(f *testing.F) {
	f.Add([]byte{0x85, 0x00, 0x00})
	f.Add([]byte{0x85, 0x00, 0x19, 0x00, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Add([]byte{0x7f, 0x00, 0x01, 0x03})
	f.Add([]byte{0x7f, 0x00, 0x01, 0x04})
	f.Add([]byte{0xea, 0x00, 0x40})
	f.Add([]byte{})
	_, rt, k := simKey(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		msg := []byte("fuzzed vote")
		rt.arm(b)
		sig, err := k.SignContext(ctx, msg)
		if err == nil {
			if !ed25519.Verify(k.Public().(ed25519.PublicKey), msg, sig) {
				t.Fatalf("a sign answered by %x returned a bad signature without error", b)
			}
		} else if !errors.Is(err, signer.ErrProtocol) && !errors.Is(err, signer.ErrDisconnected) && !errors.As(err, new(*yubihsm.DeviceError)) {
			t.Fatalf("untyped error for %x: %v", b, err)
		}
		if err := signVerified(t, ctx, k, msg); err != nil {
			t.Fatalf("sign after %x: %v", b, err)
		}
	})
}

// TestRetryOnRefusedSession: when the device refuses a session message
// itself (INVALID SESSION, or AUTHENTICATION FAILED for a MAC it did not
// accept), the sign opens a new session and retries once, and succeeds;
// a second refusal in a row is returned.
func TestRetryOnRefusedSession(t *testing.T) {
	_, rt, k := simKey(t)
	ctx := context.Background()
	msg := []byte("a vote")
	if err := signVerified(t, ctx, k, msg); err != nil {
		t.Fatal(err)
	}
	for _, code := range []yubihsm.ErrorCode{yubihsm.CodeInvalidSession, yubihsm.CodeAuthenticationFailed} {
		tctx, retries := countRetries(ctx)
		rt.arm([]byte{0x7f, 0x00, 0x01, byte(code)})
		if err := signVerified(t, tctx, k, msg); err != nil || retries.Load() != 1 {
			t.Errorf("code %v: %v after %d retries; want a signature after 1", code, err, retries.Load())
		}
	}
}

// TestUnansweredCommand: a sign whose command gets no answer drops its
// session, on which the device may or may not have run the command (a
// hung device never saw it; after a lost answer it ran it). Either way the
// dropped session is closed on the device, not left holding one of its 16
// slots until the idle timeout.
func TestUnansweredCommand(t *testing.T) {
	for _, ran := range []bool{false, true} {
		t.Run(fmt.Sprintf("ran=%v", ran), func(t *testing.T) {
			t.Parallel()
			dev, rt, k := simKey(t)
			msg := []byte("a vote")
			sign := func(ctx context.Context) error { return signVerified(t, ctx, k, msg) }
			if err := sign(context.Background()); err != nil {
				t.Fatal(err)
			}
			signs := dev.Stats().Signs
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			release := func() {}
			if ran {
				rt.mu.Lock()
				rt.lose = true
				rt.mu.Unlock()
			} else {
				release = dev.Hang()
			}
			err := sign(ctx)
			release()
			if err == nil {
				t.Fatal("a sign without an answer succeeded")
			}
			if n := dev.Stats().Signs - signs; (n == 1) != ran {
				t.Fatalf("the device signed %d times for the unanswered command", n)
			}
			if err := sign(context.Background()); err != nil {
				t.Fatalf("sign after the fault: %v", err)
			}
			waitOpenSessions(t, dev, 2, "the Store's and the Signer's new one")
		})
	}
}
