package keybase

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signer"
)

// wantFileError fails unless err is a *FileError of problem, wrapping
// sentinel.
func wantFileError(t *testing.T, what string, err error, problem FileProblem, sentinel error) {
	t.Helper()
	var fe *FileError
	if !errors.As(err, &fe) || fe.Problem != problem || !errors.Is(err, sentinel) {
		t.Errorf("%s: got %v, want a *FileError %q wrapping %v", what, err, problem, sentinel)
	}
}

func needSymlinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
}

// A symbolic link to a key directory is refused, at OpenStore and, if the
// directory became one since, at every later read and write.
func TestStoreSymlinkedDirectory(t *testing.T) {
	needSymlinks(t)
	ctx := context.Background()
	s := testStore(t)
	if _, err := s.GenerateKey(ctx, signer.Ed25519, "validator"); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(s.Dir(), link); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{link, link + "/", link + "/."} {
		_, err := OpenStore(ctx, Config{Dir: dir, Secret: pw, Cost: testCost})
		wantFileError(t, "OpenStore("+dir+")", err, FileSymlink, signer.ErrPermissionDenied)
	}
	_, err := Open(ctx, Config{Dir: link, Secret: pw, Key: signer.KeyRef{Label: "validator"}})
	wantFileError(t, "Open", err, FileSymlink, signer.ErrPermissionDenied)

	// The directory swapped for a link after OpenStore.
	ls, err := OpenStore(ctx, Config{Dir: filepath.Join(t.TempDir(), "keys"), Secret: pw, Cost: testCost})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(s.Dir(), ls.Dir()); err != nil {
		t.Fatal(err)
	}
	_, err = ls.ListKeys(ctx)
	wantFileError(t, "ListKeys", err, FileSymlink, signer.ErrPermissionDenied)
	_, err = ls.KeyInfo(ctx, "validator")
	wantFileError(t, "KeyInfo", err, FileSymlink, signer.ErrPermissionDenied)
	_, err = ls.OpenKey(ctx, signer.KeyRef{Label: "validator"})
	wantFileError(t, "OpenKey", err, FileSymlink, signer.ErrPermissionDenied)
	_, err = ls.ExportArmor(ctx, "validator")
	wantFileError(t, "ExportArmor", err, FileSymlink, signer.ErrPermissionDenied)
	_, err = ls.GenerateKey(ctx, signer.Ed25519, "other")
	wantFileError(t, "GenerateKey", err, FileSymlink, signer.ErrPermissionDenied)
	err = ls.DeleteKey(ctx, signer.KeyRef{Label: "validator"})
	wantFileError(t, "DeleteKey", err, FileSymlink, signer.ErrPermissionDenied)
	err = ls.ChangePassphrase(ctx, "validator", secretOf("new"))
	wantFileError(t, "ChangePassphrase", err, FileSymlink, signer.ErrPermissionDenied)
	if _, err := s.KeyInfo(ctx, "validator"); err != nil {
		t.Errorf("the key behind the link: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(s.Dir(), "other.key")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("GenerateKey wrote through the link: %v", err)
	}
}

// Key files and the lock file that are symbolic links are not followed.
func TestStoreSymlinkedFiles(t *testing.T) {
	needSymlinks(t)
	ctx := context.Background()
	s := testStore(t)
	if _, err := s.GenerateKey(ctx, signer.Ed25519, "a"); err != nil {
		t.Fatal(err)
	}
	// b.key links to a's file in the directory, c.key to a copy outside.
	if err := os.Symlink("a.key", filepath.Join(s.Dir(), "b.key")); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(s.path("a"))
	outside := filepath.Join(t.TempDir(), "planted.key")
	os.WriteFile(outside, data, 0o600)
	if err := os.Symlink(outside, filepath.Join(s.Dir(), "c.key")); err != nil {
		t.Fatal(err)
	}
	keys, err := s.ListKeys(ctx)
	if len(keys) != 1 || keys[0].Label != "a" {
		t.Errorf("ListKeys = %v, want a only", keys)
	}
	wantFileError(t, "ListKeys", err, FileSymlink, signer.ErrPermissionDenied)
	if err == nil || !strings.Contains(err.Error(), `"b"`) || !strings.Contains(err.Error(), `"c"`) {
		t.Errorf("ListKeys error %v does not name b and c", err)
	}
	for _, name := range []string{"b", "c"} {
		_, err := s.KeyInfo(ctx, name)
		wantFileError(t, "KeyInfo("+name+")", err, FileSymlink, signer.ErrPermissionDenied)
		_, err = s.OpenKey(ctx, signer.KeyRef{Label: name})
		wantFileError(t, "OpenKey("+name+")", err, FileSymlink, signer.ErrPermissionDenied)
		_, err = s.ExportArmor(ctx, name)
		wantFileError(t, "ExportArmor("+name+")", err, FileSymlink, signer.ErrPermissionDenied)
		err = s.ChangePassphrase(ctx, name, secretOf("new"))
		wantFileError(t, "ChangePassphrase("+name+")", err, FileSymlink, signer.ErrPermissionDenied)
	}
	if after, _ := os.ReadFile(outside); !bytes.Equal(after, data) {
		t.Error("the file the link points at changed")
	}

	// The lock file a link to a file that does not exist yet: writers
	// neither create it nor lock it.
	lock := filepath.Join(s.Dir(), lockName)
	os.Remove(lock)
	target := filepath.Join(t.TempDir(), "created")
	if err := os.Symlink(target, lock); err != nil {
		t.Fatal(err)
	}
	_, err = s.GenerateKey(ctx, signer.Ed25519, "d")
	wantFileError(t, "GenerateKey with a linked lock file", err, FileSymlink, signer.ErrPermissionDenied)
	err = s.DeleteKey(ctx, signer.KeyRef{Label: "a"})
	wantFileError(t, "DeleteKey with a linked lock file", err, FileSymlink, signer.ErrPermissionDenied)
	if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the lock file's link was followed: %v", err)
	}
}

// A crashed writer's temporary copy of a key goes with the key, however
// fresh.
func TestStoreDeleteRemovesEveryTemp(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	for _, name := range []string{"validator", "other"} {
		if _, err := s.GenerateKey(ctx, signer.Ed25519, name); err != nil {
			t.Fatal(err)
		}
	}
	key, _ := os.ReadFile(s.path("validator"))
	var temps []string
	for i, age := range []time.Duration{0, time.Minute, 2 * staleTemp} {
		p := filepath.Join(s.Dir(), ".validator.tmp-"+strings.Repeat("1", i+1))
		os.WriteFile(p, key, 0o600)
		mtime := time.Now().Add(-age)
		os.Chtimes(p, mtime, mtime)
		temps = append(temps, p)
	}
	keep := filepath.Join(s.Dir(), ".other.tmp-123")
	os.WriteFile(keep, key, 0o600)
	if err := s.DeleteKey(ctx, signer.KeyRef{Label: "validator"}); err != nil {
		t.Fatal(err)
	}
	for _, p := range temps {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("after Delete, the temporary copy %s is still there (%v)", filepath.Base(p), err)
		}
	}
	if _, err := os.Lstat(keep); err != nil {
		t.Errorf("another key's temporary file was removed: %v", err)
	}
}

// A key directory owned by another user is refused. Making one needs
// root.
func TestStoreForeignOwner(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("ownership is not checked on Windows")
	}
	if os.Geteuid() != 0 {
		t.Skip("making a directory owned by another user needs root")
	}
	ctx := context.Background()
	s := testStore(t)
	if _, err := s.GenerateKey(ctx, signer.Ed25519, "validator"); err != nil {
		t.Fatal(err)
	}
	const uid = 4242
	if err := os.Chown(s.Dir(), uid, uid); err != nil {
		t.Fatal(err)
	}
	_, err := OpenStore(ctx, Config{Dir: s.Dir(), Secret: pw, Cost: testCost})
	wantFileError(t, "OpenStore", err, FileForeignOwner, signer.ErrPermissionDenied)
	if err != nil && !strings.Contains(err.Error(), "4242") {
		t.Errorf("the error %v does not name the owner", err)
	}
	_, err = s.ListKeys(ctx)
	wantFileError(t, "ListKeys", err, FileForeignOwner, signer.ErrPermissionDenied)
	_, err = s.OpenKey(ctx, signer.KeyRef{Label: "validator"})
	wantFileError(t, "OpenKey", err, FileForeignOwner, signer.ErrPermissionDenied)
	_, err = s.GenerateKey(ctx, signer.Ed25519, "k")
	wantFileError(t, "GenerateKey", err, FileForeignOwner, signer.ErrPermissionDenied)
	if err := os.Chown(s.Dir(), 0, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ListKeys(ctx); err != nil {
		t.Errorf("ListKeys once owned again: %v", err)
	}
}

// identityKeyFile is a key file whose public block holds the identity
// point, a small-order key, with a real key's private block.
func identityKeyFile(t *testing.T) []byte {
	t.Helper()
	k, err := fromPrivate(ed25519.NewKeyFromSeed(katSeed))
	if err != nil {
		t.Fatal(err)
	}
	defer k.wipe()
	armor, err := seal(context.Background(), k, []byte("correct horse battery staple"), testCost, bytes.NewReader(make([]byte, 64)))
	if err != nil {
		t.Fatal(err)
	}
	identity := make(ed25519.PublicKey, 32)
	identity[0] = 1
	data, err := keyFileBytes(identity, "k", armor)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A small-order Ed25519 public key is refused where a key enters the
// store: a key file's public block, an imported key's public half.
func TestStoreRefusesDegenerateEd25519(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	if _, err := s.GenerateKey(ctx, signer.Ed25519, "good"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.path("bad"), identityKeyFile(t), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.KeyInfo(ctx, "bad"); !errors.Is(err, signer.ErrInvalidKey) || !strings.Contains(err.Error(), `"bad"`) {
		t.Errorf("KeyInfo of a small-order key: got %v, want ErrInvalidKey naming it", err)
	}
	keys, err := s.ListKeys(ctx)
	if !errors.Is(err, signer.ErrInvalidKey) || len(keys) != 1 || keys[0].Label != "good" {
		t.Errorf("ListKeys: %v, %v; want good only and ErrInvalidKey for bad", keys, err)
	}
	if _, err := s.OpenKey(ctx, signer.KeyRef{Label: "bad"}); !errors.Is(err, signer.ErrInvalidKey) {
		t.Errorf("OpenKey of a small-order key: got %v", err)
	}

	// A 64-byte private key whose public half is not its seed's (here the
	// identity point) is refused on import, as key or as armor.
	forged := append(append(ed25519.PrivateKey(nil), katSeed...), make([]byte, 32)...)
	forged[32] = 1
	if _, err := s.ImportKey(ctx, forged, 0, "forged"); !errors.Is(err, signer.ErrInvalidKey) {
		t.Errorf("ImportKey of a key with a forged public half: got %v", err)
	}
	plain := encodeBlock(block{Type: blockPrivate, Data: anyBytes(typePrivEd25519, forged)})
	u := s.with(secretOf(""), UnlockOnce)
	u.cfg.AllowUnencrypted = true
	if _, err := u.ImportArmor(ctx, plain, "forged"); !errors.Is(err, signer.ErrInvalidKey) {
		t.Errorf("ImportArmor of a key with a forged public half: got %v", err)
	}
	if _, err := os.Lstat(s.path("forged")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused import left a file: %v", err)
	}
}

// A block's header count is capped, so the check for a repeated header
// stays cheap however many lines a file holds.
func TestArmorHeaderCap(t *testing.T) {
	withHeaders := func(n int) []byte {
		b := block{Type: blockPrivate, Data: []byte("data")}
		for i := range n {
			b.Headers = append(b.Headers, header{Key: "h" + strconv.Itoa(i), Value: "v"})
		}
		return encodeBlock(b)
	}
	if b, err := decodeBlock(&lines{data: withHeaders(maxHeaders)}); err != nil || len(b.Headers) != maxHeaders {
		t.Fatalf("%d headers: %v", maxHeaders, err)
	}
	for _, n := range []int{maxHeaders + 1, 2000} {
		data := withHeaders(n)
		_, err := decodeBlock(&lines{data: data})
		var ae *ArmorError
		if !errors.As(err, &ae) || ae.Problem != ArmorTooLarge || ae.Line != maxHeaders+2 || !errors.Is(err, signer.ErrCorrupt) {
			t.Errorf("%d headers (%d bytes): got %v, want ArmorTooLarge at line %d", n, len(data), err, maxHeaders+2)
		}
	}
	// 64 KiB of short, distinct headers: the reader stops at the cap.
	var big bytes.Buffer
	big.WriteString("-----BEGIN " + blockPrivate + "-----\n")
	for i := 0; big.Len() < maxArmor-100; i++ {
		big.WriteString("k" + strings.Repeat("a", i%50) + string(rune('A'+i%26)) + ": v\n")
	}
	_, err := parsePrivateArmor(big.Bytes())
	var ae *ArmorError
	if !errors.As(err, &ae) || ae.Problem != ArmorTooLarge {
		t.Errorf("64 KiB of headers: got %v, want ArmorTooLarge", err)
	}
}

// A read that hangs (a stuck network file system) does not hold the
// caller past its context.
func TestStoreReadHonoursContext(t *testing.T) {
	s := testStore(t)
	if _, err := s.GenerateKey(context.Background(), signer.Ed25519, "good"); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	var hung sync.WaitGroup // reads in the hook, each past its read of testHookRead once Done
	testHookRead = func() { <-release; hung.Done() }
	defer func() {
		close(release)
		hung.Wait()
		testHookRead = nil
	}()
	for _, call := range []struct {
		what string
		f    func(ctx context.Context) error
	}{
		{"KeyInfo", func(ctx context.Context) error { _, err := s.KeyInfo(ctx, "good"); return err }},
		{"ListKeys", func(ctx context.Context) error { _, err := s.ListKeys(ctx); return err }},
		{"OpenKey", func(ctx context.Context) error { _, err := s.OpenKey(ctx, signer.KeyRef{Label: "good"}); return err }},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		done := make(chan error, 1)
		hung.Add(1) // each call reads the one key file once
		go func() { done <- call.f(ctx) }()
		select {
		case err := <-done:
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s: got %v, want the context's error", call.what, err)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("%s: still blocked on a hung read after 5 s", call.what)
		}
		cancel()
	}
}
