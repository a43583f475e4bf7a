package inprocess_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/signer"
)

// TestKeyFileGenerate makes a key file through the inprocess: store, as
// keys generate does: mode 0600, readable back, signing for the public key
// it reported; a second generate leaves the file alone.
func TestKeyFileGenerate(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "validator.pem")
	st, ref, err := signer.OpenStore(ctx, "inprocess:file="+path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	gen, ok := st.(signer.KeyGenerator)
	if !ok {
		t.Fatalf("%T is no KeyGenerator", st)
	}
	info, err := gen.GenerateKey(ctx, signer.Ed25519, ref.Label)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, %v; want mode 0600", fi, err)
	}
	before, _ := os.ReadFile(path)
	s, err := signer.Open(ctx, "inprocess:file="+path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	msg := []byte("a vote")
	sig, err := s.SignContext(ctx, msg)
	if err != nil || !ed25519.Verify(info.Public.(ed25519.PublicKey), msg, sig) {
		t.Fatalf("the generated key does not sign for its public key: %v", err)
	}
	if _, err := gen.GenerateKey(ctx, signer.Ed25519, ""); !errors.Is(err, signer.ErrKeyExists) {
		t.Errorf("generate over an existing file: %v", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("a refused generate changed the file")
	}
	if _, err := gen.GenerateKey(ctx, signer.BLS12381MinPK, ""); !errors.Is(err, signer.ErrUnsupported) {
		t.Errorf("BLS key file: %v", err)
	}
	if _, err := inprocess.LoadKeyFile(path); err != nil {
		t.Error(err)
	}
	if err := st.(signer.KeyDeleter).DeleteKey(ctx, signer.KeyRef{Label: "other.pem"}); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("delete by another name: %v", err)
	}
	if err := st.(signer.KeyDeleter).DeleteKey(ctx, ref); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("key file after delete: %v", err)
	}
}
