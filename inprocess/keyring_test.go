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

func TestKeyringConformance(t *testing.T) {
	var ring inprocess.Keyring // the zero value is ready
	defer ring.Close()
	signertest.RunKeyStore(t, &ring, signertest.KeyStoreOptions{})
	// Keys opened from the ring pass the signer suite too.
	ctx := context.Background()
	if _, err := ring.GenerateKey(ctx, signer.ECDSASecp256k1, "k1"); err != nil {
		t.Fatal(err)
	}
	signertest.Run(t, func() (signer.Signer, error) { return ring.OpenKey(ctx, signer.KeyRef{Label: "k1"}) }, signertest.Options{})
}

func TestKeyringCopies(t *testing.T) {
	ctx := context.Background()
	var ring inprocess.Keyring
	info, err := ring.GenerateKey(ctx, signer.Ed25519, "validator")
	if err != nil {
		t.Fatal(err)
	}
	a, err := ring.OpenKey(ctx, signer.KeyRef{Label: "validator"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := ring.OpenKey(ctx, signer.KeyRef{Label: "validator"})
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
	if err := ring.DeleteKey(ctx, info.Ref()); err != nil {
		t.Fatal(err)
	}
	if _, err := b.SignContext(ctx, []byte("vote 2")); err != nil {
		t.Errorf("a Signer open before DeleteKey stopped working: %v", err)
	}
	b.Close()
	ring.GenerateKey(ctx, signer.Ed25519, "x")
	ring.Close()
	if keys, _ := ring.ListKeys(ctx); len(keys) != 0 {
		t.Errorf("after Close the ring lists %d keys", len(keys))
	}
}

func TestKeyringRefuses(t *testing.T) {
	ctx := context.Background()
	var ring inprocess.Keyring
	for _, label := range []string{"", strings.Repeat("x", inprocess.MaxLabel+1), "\xff"} {
		if _, err := ring.GenerateKey(ctx, signer.Ed25519, label); !errors.Is(err, signer.ErrInvalidArgument) {
			t.Errorf("label %q: got %v, want ErrInvalidArgument", label, err)
		}
	}
	if _, err := ring.GenerateKey(ctx, signer.Algorithm(0), "bad"); !errors.Is(err, signer.ErrUnsupported) {
		t.Errorf("algorithm 0: %v", err)
	}
	if _, err := ring.ImportKey(ctx, "not a key", 0, "bad"); !errors.Is(err, signer.ErrUnsupported) {
		t.Errorf("import of a string: %v", err)
	}
	if keys, _ := ring.ListKeys(ctx); len(keys) != 0 {
		t.Errorf("refused keys were stored: %+v", keys)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := ring.GenerateKey(done, signer.Ed25519, "late"); !errors.Is(err, context.Canceled) {
		t.Errorf("GenerateKey with a cancelled context: %v", err)
	}
	if _, err := ring.ListKeys(done); !errors.Is(err, context.Canceled) {
		t.Errorf("ListKeys with a cancelled context: %v", err)
	}
}

func TestKeyringConcurrent(t *testing.T) {
	ctx := context.Background()
	var ring inprocess.Keyring
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// All race for one label: exactly one wins.
			if _, err := ring.GenerateKey(ctx, signer.Ed25519, "shared"); err != nil && !errors.Is(err, signer.ErrKeyExists) {
				errs <- err
			}
			s, err := ring.OpenKey(ctx, signer.KeyRef{Label: "shared"})
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			if _, err := s.SignContext(ctx, []byte("m")); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if keys, _ := ring.ListKeys(ctx); len(keys) != 1 {
		t.Errorf("%d keys after racing for one label, want 1", len(keys))
	}
}

func TestKeyringRefs(t *testing.T) {
	ctx := context.Background()
	var ring inprocess.Keyring
	a, _ := ring.GenerateKey(ctx, signer.Ed25519, "a")
	b, _ := ring.GenerateKey(ctx, signer.Ed25519, "b")
	if a.ID == "" || a.ID == b.ID {
		t.Fatalf("ids %q and %q: want two different ones", a.ID, b.ID)
	}
	open := func(ref signer.KeyRef) error {
		s, err := ring.OpenKey(ctx, ref)
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
	if err := ring.DeleteKey(ctx, signer.KeyRef{Label: "b", ID: a.ID}); !errors.Is(err, signer.ErrKeyNotFound) {
		t.Errorf("DeleteKey with a mismatched label and id: %v", err)
	}
	if keys, _ := ring.ListKeys(ctx); len(keys) != 2 {
		t.Errorf("a refused DeleteKey removed a key: %d left", len(keys))
	}
}

func TestKeyringPublicKeysAreCopies(t *testing.T) {
	ctx := context.Background()
	var ring inprocess.Keyring
	ki, err := ring.GenerateKey(ctx, signer.RSAPSS, "rsa")
	if err != nil {
		t.Fatal(err)
	}
	ki.Public.(*rsa.PublicKey).E = 3 // a caller scribbles on what it got
	keys, _ := ring.ListKeys(ctx)
	keys[0].Public.(*rsa.PublicKey).N.SetInt64(1)
	s, err := ring.OpenKey(ctx, signer.KeyRef{Label: "rsa"})
	if err != nil {
		t.Fatalf("the stored key was damaged through a returned public key: %v", err)
	}
	defer s.Close()
	s.Public().(*rsa.PublicKey).E = 5
	sig, err := s.SignContext(ctx, []byte("m"))
	if err != nil {
		t.Fatal(err)
	}
	keys, _ = ring.ListKeys(ctx)
	if err := signer.RSAPSS.Verify(keys[0].Public, []byte("m"), sig); err != nil {
		t.Errorf("signature does not verify under the listed key: %v", err)
	}
}
