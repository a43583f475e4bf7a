package privval

import (
	"context"
	"crypto/ed25519"
	"errors"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"
)

// flakyListener fails its first Accepts with errs, one each, then
// accepts from the real listener under it.
type flakyListener struct {
	net.Listener
	mu   sync.Mutex
	errs []error
}

func (l *flakyListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	if len(l.errs) > 0 {
		err := l.errs[0]
		l.errs = l.errs[1:]
		l.mu.Unlock()
		return nil, err
	}
	l.mu.Unlock()
	return l.Listener.Accept()
}

func acceptErr(errno syscall.Errno) error {
	return &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", errno)}
}

// TestServeOutlivesTemporaryAcceptErrors: out of file descriptors
// (EMFILE, ENFILE), out of buffers (ENOBUFS) or a connection aborted
// before it was accepted, Accept fails; Serve waits 5 ms, doubling, and
// accepts again — it serves the next connection — instead of returning
// (which made the daemon exit 1 under a connection flood). Shed is asked
// to free a descriptor when descriptors ran out, and resets the backoff
// when it did.
func TestServeOutlivesTemporaryAcceptErrors(t *testing.T) {
	errs := []error{acceptErr(syscall.EMFILE), acceptErr(syscall.EMFILE), acceptErr(syscall.ENFILE),
		acceptErr(syscall.ENOBUFS), acceptErr(syscall.ECONNABORTED), acceptErr(syscall.EMFILE)}
	type call struct {
		err  error
		wait time.Duration
	}
	var mu sync.Mutex
	var calls []call
	sheds := 0
	cfg := ServerConfig{
		OnAcceptError: func(err error, wait time.Duration) {
			mu.Lock()
			calls = append(calls, call{err, wait})
			mu.Unlock()
		},
		Shed: func() bool {
			mu.Lock()
			defer mu.Unlock()
			sheds++
			return sheds == 3 // the third shortage finds a connection to close
		},
	}
	s, err := NewServer(newGuard(t, newKey(1), false), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln := &flakyListener{Listener: listen(t, "tcp"), errs: errs}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	c := dialNative(t, ln)
	if url, _, _, _ := c.call(encNativePubKeyRequest()); url != typePubKeyResponse {
		t.Fatalf("answer %q", url)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Serve returned %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	// EMFILE 5 ms, EMFILE 10 ms, ENFILE shed (5 ms), ENOBUFS 10 ms,
	// ECONNABORTED 20 ms, EMFILE (not shed) 40 ms.
	want := []time.Duration{5, 10, 5, 10, 20, 40}
	if len(calls) != len(want) {
		t.Fatalf("OnAcceptError called %d times, want %d: %v", len(calls), len(want), calls)
	}
	for i, c := range calls {
		if !errors.Is(c.err, errs[i]) || c.wait != want[i]*time.Millisecond {
			t.Errorf("call %d: %v, wait %v; want %v, %v", i, c.err, c.wait, errs[i], want[i]*time.Millisecond)
		}
	}
	if sheds != 4 {
		t.Errorf("Shed called %d times, want 4 (once per EMFILE or ENFILE)", sheds)
	}
}

// TestServeAcceptBackoffBounded: the wait doubles up to 1 s and no
// further, and a permanent error still ends Serve.
func TestServeAcceptBackoffBounded(t *testing.T) {
	wait := acceptBackoff()
	var last time.Duration
	for range 20 {
		last = wait.Next()
	}
	if last != MaxAcceptBackoff {
		t.Fatalf("backoff after 20 errors %v, want %v", last, MaxAcceptBackoff)
	}
	for _, err := range []error{acceptErr(syscall.EMFILE), acceptErr(syscall.ENFILE), acceptErr(syscall.ENOBUFS),
		acceptErr(syscall.ECONNABORTED), acceptErr(syscall.ENOMEM)} {
		if !TemporaryAcceptError(err) {
			t.Errorf("%v is not temporary", err)
		}
	}
	if TemporaryAcceptError(net.ErrClosed) || TemporaryAcceptError(acceptErr(syscall.EINVAL)) {
		t.Error("a closed or broken listener is temporary")
	}
	s, err := NewServer(newGuard(t, newKey(1), false), ServerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ln := &flakyListener{Listener: listen(t, "tcp"), errs: []error{acceptErr(syscall.EINVAL)}}
	if err := s.Serve(context.Background(), ln); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("Serve on a broken listener: %v", err)
	}
}

// TestShutdownEndsHandshakes: Shutdown ends a handshake in progress at
// once — a silent peer cannot hold a graceful stop for the handshake
// timeout — and Serve returns ErrShutdown.
func TestShutdownEndsHandshakes(t *testing.T) {
	entered := make(chan struct{}, 1)
	h := func(ctx context.Context, conn net.Conn) (net.Conn, ed25519.PublicKey, error) {
		entered <- struct{}{}
		<-ctx.Done() // a peer that never answers
		return nil, nil, ctx.Err()
	}
	s, err := NewServer(newGuard(t, newKey(1), false), ServerConfig{Handshake: h, HandshakeTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	ln := listen(t, "tcp")
	done := make(chan error, 1)
	go func() { done <- s.Serve(context.Background(), ln) }()
	_ = dialNative(t, ln)
	<-entered
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown with a handshake in progress: %v", err)
	}
	if err := <-done; !errors.Is(err, ErrShutdown) {
		t.Fatalf("Serve returned %v", err)
	}
}
