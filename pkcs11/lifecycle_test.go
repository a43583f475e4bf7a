//go:build cgo

package pkcs11_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
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
	a, err := pkcs11.OpenStore(ctx, st.Config())
	if err != nil {
		t.Fatal(err)
	}
	ki, err := a.GenerateKey(ctx, signer.Ed25519, "shared")
	if err != nil {
		t.Fatal(err)
	}
	b, err := pkcs11.OpenStore(ctx, st.Config())
	if err != nil {
		t.Fatal(err)
	}
	if mods := pkcs11.LoadedModules(); len(mods) != 1 || mods[st.Module] != 2 {
		t.Errorf("two tokens on one module: loaded %v, want one module with two users", mods)
	}
	k, err := openKey(ctx, b, ki.Ref())
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	b.Close() // k still holds b's pool, and so the module
	if mods := pkcs11.LoadedModules(); mods[st.Module] != 1 {
		t.Errorf("after closing both tokens with a key open: %v, want the module kept for the key", mods)
	}
	signAndVerify(t, k)
	if _, err := openKey(ctx, b, ki.Ref()); !errors.Is(err, signer.ErrClosed) {
		t.Errorf("OpenKey on a closed Store: %v, want ErrClosed", err)
	}
	k.Close()
	if mods := pkcs11.LoadedModules(); len(mods) != 0 {
		t.Errorf("after the last user closed: %v loaded, want none", mods)
	}
	// Loaded and initialized again from scratch.
	cfg := st.Config()
	cfg.Key.Label = "shared"
	k, err = pkcs11.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	signAndVerify(t, k)
	k.Close()
	if mods := pkcs11.LoadedModules(); len(mods) != 0 {
		t.Errorf("Open's token outlived its Signer: %v", mods)
	}
}

// TestHungToken runs the conformance suite's deadline check on a token that
// stops answering, and checks that a sign waiting for a session (all of a
// pool of one in use) gives up at its deadline too.
func TestHungToken(t *testing.T) {
	_, tok := openToken(t, pkcs11.WithFaults, func(c *pkcs11.Config) { c.PoolSize = 1 })
	ctx := context.Background()
	ki, err := tok.GenerateKey(ctx, signer.ECDSAP256, "hang")
	if err != nil {
		t.Fatal(err)
	}
	opts := signertest.Options{Hang: tok.Hang, Timeout: 10 * time.Second}
	if err := signertest.Check(func() (signer.Signer, error) { return tok.OpenKey(ctx, ki.Ref()) }, opts); err != nil {
		t.Error(err)
	}

	k, err := openKey(ctx, tok, ki.Ref())
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
// deadline, and the Signer opened once the token answers is closed.
func TestOpenKeyDeadline(t *testing.T) {
	_, tok := openToken(t, pkcs11.WithFaults)
	ctx := context.Background()
	ki, err := tok.GenerateKey(ctx, signer.Ed25519, "deadline")
	if err != nil {
		t.Fatal(err)
	}
	release := tok.Hang()
	dctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	s, err := tok.OpenKey(dctx, ki.Ref())
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) || s != nil {
		t.Errorf("OpenKey on a hung token: %v, %v; want a nil Signer and DeadlineExceeded", s, err)
	}
	release()
	k, err := openKey(ctx, tok, ki.Ref())
	if err != nil {
		t.Fatal(err)
	}
	signAndVerify(t, k)
	k.Close()
}

// TestModuleOneFile: a module reached through two paths (the SoftHSM2
// package's compatibility symlink and the file it links to; a symlink made
// here when the system has no such pair) is one module. Closing the token
// opened through one path leaves the module initialized for the other.
func TestModuleOneFile(t *testing.T) {
	st := pkcs11test.New(t)
	ctx := context.Background()
	if n := len(pkcs11.LoadedModules()); n != 0 {
		t.Fatalf("%d modules loaded before the test", n)
	}
	var pathA, pathB string
	for _, p := range pkcs11test.ModulePaths {
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			continue
		}
		if target, err := filepath.EvalSymlinks(p); err == nil && target != p {
			if a, err := os.Stat(p); err == nil {
				if b, err := os.Stat(st.Module); err == nil && os.SameFile(a, b) {
					pathA, pathB = p, target
					break
				}
			}
		}
	}
	if pathA == "" {
		pathA = filepath.Join(t.TempDir(), "libsofthsm2-link.so")
		if err := os.Symlink(st.Module, pathA); err != nil {
			t.Skipf("cannot make a symlink to the module: %v", err)
		}
		pathB = st.Module
	}
	t.Logf("path A %s, path B %s", pathA, pathB)
	cfgA, cfgB := st.Config(), st.Config()
	cfgA.Module, cfgB.Module = pathA, pathB
	a, err := pkcs11.OpenStore(ctx, cfgA)
	if err != nil {
		t.Fatal(err)
	}
	ki, err := a.GenerateKey(ctx, signer.ECDSAP256, "one-file")
	if err != nil {
		a.Close()
		t.Fatal(err)
	}
	b, err := pkcs11.OpenStore(ctx, cfgB)
	if err != nil {
		a.Close()
		t.Fatal(err)
	}
	defer b.Close()
	k, err := openKey(ctx, b, ki.Ref())
	if err != nil {
		a.Close()
		t.Fatal(err)
	}
	defer k.Close()
	if mods := pkcs11.LoadedModules(); len(mods) != 1 {
		t.Errorf("one file through two paths: loaded %v, want one module", mods)
	}
	a.Close()
	signAndVerify(t, k)
	k.Close()
	b.Close()
	if mods := pkcs11.LoadedModules(); len(mods) != 0 {
		t.Errorf("after the last user closed: %v loaded, want none", mods)
	}
}
