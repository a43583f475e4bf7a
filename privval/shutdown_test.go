package privval

import (
	"context"
	"crypto/ed25519"
	"errors"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer/signertest"
)

// gatedKey is a fake key whose signs wait until released, so that a test
// can hold a sign in flight.
type gatedKey struct {
	*signertest.Fake
	entered chan struct{}
	release chan struct{}
}

func (k *gatedKey) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	k.entered <- struct{}{}
	select {
	case <-k.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return k.Fake.SignContext(ctx, msg)
}

// TestEndpointShutdown: Shutdown while a sign is in flight lets it be
// answered and verified, then Run returns ErrShutdown without a new dial.
func TestEndpointShutdown(t *testing.T) {
	k := &gatedKey{Fake: newKey(1), entered: make(chan struct{}, 1), release: make(chan struct{})}
	g := newGuard(t, k, false)
	ln := listen(t, "unix")
	connects := make(chan struct{}, 10)
	e, err := NewEndpoint(g, Config{Dialect: V038, Network: "unix", Address: ln.Addr().String(), MinBackoff: time.Millisecond,
		OnConnect: func(ed25519.PublicKey) { connects <- struct{}{} }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	n := accept(t, ln, V038)
	<-connects

	v := testVote(typePrevote, 5, 0, 1)
	answer := make(chan []byte, 1)
	go func() {
		b, _ := n.roundTrip(encSignVoteRequest(v, "c", V038))
		answer <- b
	}()
	<-k.entered // the sign is in flight

	shut := make(chan error, 1)
	go func() { shut <- e.Shutdown(context.Background()) }()
	// Shutdown must wait for the sign: it has not returned yet.
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v with a sign in flight", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(k.release)
	r, err := decodeResponse(<-answer, V038)
	if err != nil || r.err != nil || r.vote == nil {
		t.Fatalf("in-flight sign answered %+v, %v", r, err)
	}
	verify(t, k.PublicKey(), voteSignBytes(t, v, "c", signbytes.CometBFT), r.vote.Signature)
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := <-done; !errors.Is(err, ErrShutdown) {
		t.Fatalf("Run returned %v, want ErrShutdown", err)
	}
	if _, err := n.roundTrip(encPingRequest()); err == nil {
		t.Fatal("the connection still answers after Shutdown")
	}
	if len(connects) != 0 {
		t.Fatal("the endpoint dialed again after Shutdown")
	}
	if err := e.Run(ctx); !errors.Is(err, ErrShutdown) {
		t.Fatalf("Run after Shutdown: %v", err)
	}
}

// TestServerShutdown: an idle connection is closed, Serve returns
// ErrShutdown and the listener no longer accepts.
func TestServerShutdown(t *testing.T) {
	k := newKey(1)
	s, err := NewServer(newGuard(t, k, false), ServerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ln := listen(t, "unix")
	done := make(chan error, 1)
	go func() { done <- s.Serve(context.Background(), ln) }()
	c := dialNative(t, ln)
	if url, _, _, _ := c.call(encNativePubKeyRequest()); url != typePubKeyResponse {
		t.Fatalf("answer %q", url)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, ErrShutdown) {
		t.Fatalf("Serve returned %v", err)
	}
	_ = c.conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.conn.Write(appendFrame(nil, encNativePubKeyRequest())); err == nil {
		if _, err := readFrame(c.br, MaxNativeFrame, nil); err == nil {
			t.Fatal("the connection still answers after Shutdown")
		}
	}
}
