package keybase

import (
	"context"
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/signerkit/signerkit/signer"
)

// OpenStore creates nothing: a missing directory is an empty store until
// the first key is written, and reads of it find nothing.
func TestStoreMissingDirectory(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "not", "yet")
	s, err := OpenStore(ctx, Config{Dir: dir, Secret: pw, Cost: testCost})
	if err != nil {
		t.Fatal(err)
	}
	gone := func(when string) {
		t.Helper()
		if _, err := os.Lstat(filepath.Dir(dir)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s: the directory (or its parent) was created: %v", when, err)
		}
	}
	gone("OpenStore")
	if keys, err := s.ListKeys(ctx); err != nil || len(keys) != 0 {
		t.Errorf("ListKeys: %v, %v; want no keys", keys, err)
	}
	_, err = s.OpenKey(ctx, signer.KeyRef{Label: "validator"})
	if !errors.Is(err, signer.ErrKeyNotFound) || !strings.Contains(err.Error(), `"validator"`) {
		t.Errorf("OpenKey: got %v, want ErrKeyNotFound naming the label", err)
	}
	if _, err := Open(ctx, Config{Dir: dir, Secret: pw, Key: signer.KeyRef{Label: "validator"}}); !errors.Is(err, signer.ErrKeyNotFound) {
		t.Errorf("Open: got %v", err)
	}
	if _, err := s.KeyInfo(ctx, "validator"); !errors.Is(err, signer.ErrKeyNotFound) {
		t.Errorf("KeyInfo: got %v", err)
	}
	if _, err := s.ExportArmor(ctx, "validator"); !errors.Is(err, signer.ErrKeyNotFound) {
		t.Errorf("ExportArmor: got %v", err)
	}
	if err := s.DeleteKey(ctx, signer.KeyRef{Label: "validator"}); !errors.Is(err, signer.ErrKeyNotFound) {
		t.Errorf("DeleteKey: got %v", err)
	}
	if err := s.ChangePassphrase(ctx, "validator", secretOf("x")); !errors.Is(err, signer.ErrKeyNotFound) {
		t.Errorf("ChangePassphrase: got %v", err)
	}
	if _, err := s.GenerateKey(ctx, signer.Ed25519, ""); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("GenerateKey under a bad name: %v", err)
	}
	gone("the reads and refused writes")

	info, err := s.GenerateKey(ctx, signer.Ed25519, "validator")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() || (runtime.GOOS != "windows" && fi.Mode().Perm() != 0o700) {
			t.Errorf("%s after the first write: %v, %v; want a directory of mode 0700", d, fi, err)
		}
	}
	sg, err := s.OpenKey(ctx, signer.KeyRef{Label: "validator"})
	if err != nil {
		t.Fatal(err)
	}
	defer sg.Close()
	sig, err := sg.SignContext(ctx, []byte("m"))
	if err != nil || !ed25519.Verify(info.Public.(ed25519.PublicKey), []byte("m"), sig) {
		t.Errorf("sign with the first key: %v", err)
	}

	// A path that is not a directory is refused, at OpenStore or, if it
	// became one since, at the first write.
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, []byte("x"), 0o600)
	if _, err := OpenStore(ctx, Config{Dir: file}); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("OpenStore of a file: got %v", err)
	}
	later := filepath.Join(t.TempDir(), "later")
	s2, err := OpenStore(ctx, Config{Dir: later, Secret: pw, Cost: testCost})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(later, []byte("x"), 0o600)
	if _, err := s2.GenerateKey(ctx, signer.Ed25519, "k"); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("GenerateKey once the directory became a file: got %v", err)
	}
}
