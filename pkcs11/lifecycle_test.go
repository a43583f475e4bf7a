//go:build cgo

package pkcs11_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/signerkit/signerkit/pkcs11"
	"github.com/signerkit/signerkit/pkcs11/pkcs11test"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

// TestModuleShared: two tokens opened on one module share it; it is
// finalized with its last user and loads again afterwards.
func TestModuleShared(t *testing.T) {
	st := pkcs11test.New(t)
	ctx := context.Background()
	if n := len(pkcs11.LoadedModules()); n != 0 {
		t.Fatalf("%d modules loaded before the test", n)
	}
	a, err := pkcs11.Open(ctx, st.Config())
	if err != nil {
		t.Fatal(err)
	}
	ki, err := a.GenerateKey(ctx, signer.Ed25519, "shared")
	if err != nil {
		t.Fatal(err)
	}
	b, err := pkcs11.Open(ctx, st.Config())
	if err != nil {
		t.Fatal(err)
	}
	if mods := pkcs11.LoadedModules(); len(mods) != 1 || mods[st.Module] != 2 {
		t.Errorf("two tokens on one module: loaded %v, want one module with two users", mods)
	}
	k, err := b.Key(ctx, ki.Ref())
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	b.Close() // k still holds b's pool, and so the module
	if mods := pkcs11.LoadedModules(); mods[st.Module] != 1 {
		t.Errorf("after closing both tokens with a key open: %v, want the module kept for the key", mods)
	}
	signAndVerify(t, k)
	if _, err := b.Key(ctx, ki.Ref()); !errors.Is(err, signer.ErrClosed) {
		t.Errorf("Key on a closed token: %v, want ErrClosed", err)
	}
	k.Close()
	if mods := pkcs11.LoadedModules(); len(mods) != 0 {
		t.Errorf("after the last user closed: %v loaded, want none", mods)
	}
	// Loaded and initialized again from scratch.
	k, err = pkcs11.OpenKey(ctx, func() pkcs11.Config { c := st.Config(); c.KeyLabel = "shared"; return c }())
	if err != nil {
		t.Fatal(err)
	}
	signAndVerify(t, k)
	k.Close()
	if mods := pkcs11.LoadedModules(); len(mods) != 0 {
		t.Errorf("OpenKey's token outlived its key: %v", mods)
	}
}

// TestHungToken runs the conformance suite's deadline check on a token that
// stops answering, and checks that a sign waiting for a session (all of a
// pool of one in use) gives up at its deadline too.
func TestHungToken(t *testing.T) {
	_, tok := openToken(t, func(c *pkcs11.Config) { c.PoolSize = 1 })
	ctx := context.Background()
	ki, err := tok.GenerateKey(ctx, signer.ECDSAP256, "hang")
	if err != nil {
		t.Fatal(err)
	}
	opts := signertest.Options{Hang: tok.Hang, Timeout: 10 * time.Second}
	if err := signertest.Check(func() (signer.Signer, error) { return tok.OpenKey(ctx, ki.Ref()) }, opts); err != nil {
		t.Error(err)
	}

	k, err := tok.Key(ctx, ki.Ref())
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	release := tok.Hang()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // holds the only session, hung
		defer wg.Done()
		if _, err := k.SignContext(ctx, []byte("first")); err != nil {
			t.Errorf("the hung sign, once released: %v", err)
		}
	}()
	// Until it holds the session, a sign below could take it and hang
	// instead of waiting for it.
	for deadline := time.Now().Add(10 * time.Second); tok.BusySessions() < 1 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	for _, d := range []time.Duration{time.Millisecond, 30 * time.Millisecond} {
		dctx, cancel := context.WithTimeout(ctx, d)
		_, err := k.SignContext(dctx, []byte("second"))
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("sign with a %v deadline behind a hung one: %v, want DeadlineExceeded", d, err)
		}
	}
	release()
	wg.Wait()
	signAndVerify(t, k)
}

// TestOpenKeyDeadline: opening a key on a hung token returns at its
// deadline, and the Key opened once the token answers is closed.
func TestOpenKeyDeadline(t *testing.T) {
	_, tok := openToken(t)
	ctx := context.Background()
	ki, err := tok.GenerateKey(ctx, signer.Ed25519, "deadline")
	if err != nil {
		t.Fatal(err)
	}
	release := tok.Hang()
	dctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	k, err := tok.Key(dctx, ki.Ref())
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Key on a hung token: %v, %v; want DeadlineExceeded", k, err)
	}
	release()
	k, err = tok.Key(ctx, ki.Ref())
	if err != nil {
		t.Fatal(err)
	}
	signAndVerify(t, k)
	k.Close()
}
