package yubihsm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/certusone/yubihsm-go/commands"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/yubihsm/yubihsmsim"
)

// FuzzCheckResponse checks that every outer frame checkResponse lets
// through can be parsed by yubihsm-go's ParseResponse without a panic
// (which, unguarded, panics on short session messages and device info).
func FuzzCheckResponse(f *testing.F) {
	f.Add(byte(0x05), []byte{0x85, 0x00, 0x01, 0x00})
	f.Add(byte(0x06), []byte{0x86, 0x00, 0x02, 0x02, 0x04})
	f.Add(byte(0x03), []byte{0x83, 0x00, 0x11, 0, 1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Add(byte(0x04), []byte{0x84, 0x00, 0x00})
	f.Add(byte(0x01), []byte{0x7f, 0x00, 0x01, 0x03})
	f.Add(byte(0x01), []byte{0x7f, 0x00, 0x00})
	f.Fuzz(func(t *testing.T, cmd byte, b []byte) {
		switch cmd {
		case 0x01, 0x03, 0x04, 0x05, 0x06: // the outer commands we send
		default:
			return
		}
		err := checkResponse(cmd, b)
		var de *DeviceError
		switch {
		case err == nil:
			commands.ParseResponse(b)
		case errors.As(err, &de):
			if !errors.Is(err, de.Unwrap()) || de.Error() == "" {
				t.Fatal("DeviceError does not unwrap")
			}
		case !errors.Is(err, signer.ErrProtocol):
			t.Fatalf("checkResponse error %v does not wrap ErrProtocol", err)
		}
	})
}

func FuzzParseStatus(f *testing.F) {
	f.Add([]byte("status=OK\nserial=0012345678\nversion=3.0.4\npid=1\naddress=localhost\nport=12345\n"))
	f.Add([]byte("status=NO_DEVICE\nserial=*\n"))
	f.Add([]byte("status\n=\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := parseStatus(b)
		if err != nil && !errors.Is(err, signer.ErrProtocol) {
			t.Fatal(err)
		}
		if s.OK && !bytes.Contains(b, []byte("status=OK")) {
			t.Fatalf("OK without status=OK in %q", b)
		}
	})
}

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
func simKey(tb testing.TB) (*yubihsmsim.Device, *simTransport, *Key) {
	tb.Helper()
	dev := yubihsmsim.New(yubihsmsim.Config{})
	rt := &simTransport{h: dev.Handler()}
	ctx := context.Background()
	c, err := Open(ctx, Config{URL: "http://sim.invalid", Password: []byte("password"), HTTPClient: &http.Client{Transport: rt}, KeepAlive: -1})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	ki, err := c.GenerateKey(ctx, signer.Ed25519, "simkey")
	if err != nil {
		tb.Fatal(err)
	}
	k, err := c.Key(ctx, ki.Ref())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { k.Close() })
	return dev, rt, k
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
			if signer.Ed25519.Verify(k.Public(), msg, sig) != nil {
				t.Fatalf("a sign answered by %x returned a bad signature without error", b)
			}
		} else if !errors.Is(err, signer.ErrProtocol) && !errors.Is(err, signer.ErrDisconnected) && !errors.As(err, new(*DeviceError)) {
			t.Fatalf("untyped error for %x: %v", b, err)
		}
		if _, err := k.SignContext(ctx, msg); err != nil {
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
	if _, err := k.SignContext(ctx, msg); err != nil {
		t.Fatal(err)
	}
	for _, code := range []byte{CodeInvalidSession, CodeAuthFailed} {
		tctx, retries := CountRetries(ctx)
		rt.arm([]byte{0x7f, 0x00, 0x01, code})
		sig, err := k.SignContext(tctx, msg)
		if err != nil || retries.Load() != 1 {
			t.Errorf("code 0x%02x: %v after %d retries; want a signature after 1", code, err, retries.Load())
		} else if err := signer.Ed25519.Verify(k.Public(), msg, sig); err != nil {
			t.Errorf("code 0x%02x: %v", code, err)
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
			dev, rt, k := simKey(t)
			msg := []byte("a vote")
			sign := func(ctx context.Context) error {
				sig, err := k.SignContext(ctx, msg)
				if err == nil {
					err = signer.Ed25519.Verify(k.Public(), msg, sig)
				}
				return err
			}
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
			WaitOpenSessions(t, dev, 2, "the Client's and the Key's new one")
		})
	}
}
