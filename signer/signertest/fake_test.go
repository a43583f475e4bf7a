package signertest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

func TestFakeConforms(t *testing.T) {
	signertest.Run(t, func() (signer.Signer, error) { return signertest.NewFake(1), nil }, signertest.Options{})
}

func TestFake(t *testing.T) {
	ctx := context.Background()
	f := signertest.NewFake(2)
	sig, err := f.SignContext(ctx, []byte("m"))
	if err != nil {
		t.Fatal(err)
	}
	f.Verify(t, []byte("m"), sig)
	if f.Signs() != 1 {
		t.Errorf("Signs() = %d after one sign", f.Signs())
	}

	f.SetErr(signer.ErrDisconnected)
	if _, err := f.SignContext(ctx, []byte("m")); !errors.Is(err, signer.ErrDisconnected) {
		t.Errorf("with SetErr: %v", err)
	}
	f.SetErr(nil)

	entered, release := f.Hold()
	done := make(chan error)
	go func() { _, err := f.SignContext(ctx, []byte("m")); done <- err }()
	<-entered
	select {
	case err := <-done:
		t.Fatalf("a held sign returned %v before its release", err)
	default:
	}
	release <- struct{}{}
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := f.SignContext(cctx, []byte("m")); !errors.Is(err, context.Canceled) {
		t.Errorf("on an ended context: %v", err)
	}
	if f.Signs() != 2 {
		t.Errorf("Signs() = %d after two signs", f.Signs())
	}
	_ = f.Close()
	if _, err := f.SignContext(ctx, []byte("m")); !errors.Is(err, signer.ErrClosed) || !f.Closed() {
		t.Errorf("after Close: %v, Closed() = %v", err, f.Closed())
	}
}
