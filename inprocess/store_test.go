package inprocess_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rsa"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

func TestStoreConformance(t *testing.T) {
	t.Parallel()
	var store inprocess.Store // the zero value is ready
	defer store.Close()
	signertest.RunKeyStore(t, &store, signertest.KeyStoreOptions{})
	// Keys opened from the store pass the signer suite too.
	ctx := context.Background()
	if _, err := store.GenerateKey(ctx, signer.ECDSASecp256k1, "k1"); err != nil {
		t.Fatal(err)
	}
	signertest.Run(t, func() (signer.Signer, error) { return store.OpenKey(ctx, signer.KeyRef{Label: "k1"}) }, signertest.Options{})
}

func TestStoreCopies(t *testing.T) {
	ctx := context.Background()
	var store inprocess.Store
	info, err := store.GenerateKey(ctx, signer.Ed25519, "validator")
	if err != nil {
		t.Fatal(err)
	}
	a, err := store.OpenKey(ctx, signer.KeyRef{Label: "validator"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := store.OpenKey(ctx, signer.KeyRef{Label: "validator"})
	if err != nil {
		t.Fatal(err)
	}
	a.Close() // wipes a's copy only
	sig, err := b.SignContext(ctx, []byte("vote"))
	if err != nil {
		t.Fatalf("sign with a second Signer after closing the first: %v", err)
	}
	if !ed25519.Verify(info.Public.(ed25519.PublicKey), []byte("vote"), sig) {
		t.Fatal("signature does not verify")
	}
	if err := store.DeleteKey(ctx, info.Ref()); err != nil {
		t.Fatal(err)
	}
	if sig, err := b.SignContext(ctx, []byte("vote 2")); err != nil {
		t.Errorf("a Signer open before DeleteKey stopped working: %v", err)
	} else if !ed25519.Verify(info.Public.(ed25519.PublicKey), []byte("vote 2"), sig) {
		t.Error("a Signer open before DeleteKey signs what does not verify")
	}
	b.Close()
	if _, err := store.GenerateKey(ctx, signer.Ed25519, "x"); err != nil {
		t.Fatal(err)
	}
	c, err := store.OpenKey(ctx, signer.KeyRef{Label: "x"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	store.Close()
	if keys, err := store.ListKeys(ctx); !errors.Is(err, signer.ErrClosed) || len(keys) != 0 {
		t.Errorf("ListKeys after Close: %d keys, %v; want ErrClosed", len(keys), err)
	}
	if _, err := store.GenerateKey(ctx, signer.Ed25519, "y"); !errors.Is(err, signer.ErrClosed) {
		t.Errorf("GenerateKey after Close: %v", err)
	}
	if _, err := store.OpenKey(ctx, signer.KeyRef{Label: "x"}); !errors.Is(err, signer.ErrClosed) {
		t.Errorf("OpenKey after Close: %v", err)
	}
	if err := store.DeleteKey(ctx, signer.KeyRef{Label: "x"}); !errors.Is(err, signer.ErrClosed) {
		t.Errorf("DeleteKey after Close: %v", err)
	}
	// A Signer opened before Close keeps its own copy.
	sig, err = c.SignContext(ctx, []byte("after"))
	if err != nil {
		t.Fatalf("a Signer opened before the store's Close: %v", err)
	}
	if err := signertest.VerifyStd(signer.Ed25519, c.Public(), []byte("after"), sig); err != nil {
		t.Error(err)
	}
}

func TestStoreRefuses(t *testing.T) {
	ctx := context.Background()
	var store inprocess.Store
	for _, label := range []string{"", strings.Repeat("x", inprocess.MaxLabel+1), "\xff"} {
		if _, err := store.GenerateKey(ctx, signer.Ed25519, label); !errors.Is(err, signer.ErrInvalidArgument) {
			t.Errorf("label %q: got %v, want ErrInvalidArgument", label, err)
		}
	}
	if _, err := store.GenerateKey(ctx, signer.Algorithm(0), "bad"); !errors.Is(err, signer.ErrUnsupported) {
		t.Errorf("algorithm 0: %v", err)
	}
	if _, err := store.ImportKey(ctx, "not a key", 0, "bad"); !errors.Is(err, signer.ErrUnsupported) {
		t.Errorf("import of a string: %v", err)
	}
	if keys, _ := store.ListKeys(ctx); len(keys) != 0 {
		t.Errorf("refused keys were stored: %+v", keys)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := store.GenerateKey(done, signer.Ed25519, "late"); !errors.Is(err, context.Canceled) {
		t.Errorf("GenerateKey with a cancelled context: %v", err)
	}
	if _, err := store.ListKeys(done); !errors.Is(err, context.Canceled) {
		t.Errorf("ListKeys with a cancelled context: %v", err)
	}
}

func TestStoreConcurrent(t *testing.T) {
	ctx := context.Background()
	var store inprocess.Store
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// All race for one label: exactly one wins.
			if _, err := store.GenerateKey(ctx, signer.Ed25519, "shared"); err != nil && !errors.Is(err, signer.ErrKeyExists) {
				errs <- err
			}
			s, err := store.OpenKey(ctx, signer.KeyRef{Label: "shared"})
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			sig, err := s.SignContext(ctx, []byte("m"))
			if err != nil {
				errs <- err
			} else if !ed25519.Verify(s.Public().(ed25519.PublicKey), []byte("m"), sig) {
				errs <- errors.New("signature does not verify")
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if keys, _ := store.ListKeys(ctx); len(keys) != 1 {
		t.Errorf("%d keys after racing for one label, want 1", len(keys))
	}
}

func TestStoreRefs(t *testing.T) {
	ctx := context.Background()
	var store inprocess.Store
	a, _ := store.GenerateKey(ctx, signer.Ed25519, "a")
	b, _ := store.GenerateKey(ctx, signer.Ed25519, "b")
	if a.ID == "" || a.ID == b.ID {
		t.Fatalf("ids %q and %q: want two different ones", a.ID, b.ID)
	}
	open := func(ref signer.KeyRef) error {
		s, err := store.OpenKey(ctx, ref)
		if err == nil {
			s.Close()
		}
		return err
	}
	cases := []struct {
		ref  signer.KeyRef
		want error
	}{
		{signer.KeyRef{ID: a.ID}, nil},
		{signer.KeyRef{Label: "a", ID: a.ID}, nil},
		{signer.KeyRef{Label: "b", ID: a.ID}, signer.ErrKeyNotFound},
		{signer.KeyRef{ID: "ffff"}, signer.ErrKeyNotFound},
		{signer.KeyRef{}, signer.ErrInvalidArgument},
		{signer.KeyRef{Label: "a", Algorithm: signer.ECDSAP256}, signer.ErrInvalidArgument},
		{signer.KeyRef{Label: "a", Algorithm: signer.Ed25519}, nil},
	}
	for _, tc := range cases {
		if err := open(tc.ref); !errors.Is(err, tc.want) {
			t.Errorf("OpenKey(%v): got %v, want %v", tc.ref, err, tc.want)
		}
	}
	if err := store.DeleteKey(ctx, signer.KeyRef{Label: "b", ID: a.ID}); !errors.Is(err, signer.ErrKeyNotFound) {
		t.Errorf("DeleteKey with a mismatched label and id: %v", err)
	}
	if keys, _ := store.ListKeys(ctx); len(keys) != 2 {
		t.Errorf("a refused DeleteKey removed a key: %d left", len(keys))
	}
}

func TestStorePublicKeysAreCopies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var store inprocess.Store
	ki, err := store.GenerateKey(ctx, signer.RSAPSS, "rsa")
	if err != nil {
		t.Fatal(err)
	}
	ki.Public.(*rsa.PublicKey).E = 3 // a caller scribbles on what it got
	keys, _ := store.ListKeys(ctx)
	keys[0].Public.(*rsa.PublicKey).N.SetInt64(1)
	s, err := store.OpenKey(ctx, signer.KeyRef{Label: "rsa"})
	if err != nil {
		t.Fatalf("the stored key was damaged through a returned public key: %v", err)
	}
	defer s.Close()
	s.Public().(*rsa.PublicKey).E = 5
	sig, err := s.SignContext(ctx, []byte("m"))
	if err != nil {
		t.Fatal(err)
	}
	keys, _ = store.ListKeys(ctx)
	if err := signertest.VerifyStd(signer.RSAPSS, keys[0].Public, []byte("m"), sig); err != nil {
		t.Errorf("signature does not verify under the listed key: %v", err)
	}
}
