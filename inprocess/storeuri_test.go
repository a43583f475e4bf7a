package inprocess_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"path/filepath"
	"testing"

	_ "github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/signer"
)

// TestKeyFileStore: an inprocess: URI opened as a store imports a key by
// writing its file, once, and lists it.
func TestKeyFileStore(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "validator.pem")
	st, ref, err := signer.OpenStore(ctx, "inprocess:file="+path)
	if err != nil || ref.Label != "validator.pem" {
		t.Fatalf("OpenStore: %+v, %v", ref, err)
	}
	defer st.Close()
	l := st.(signer.KeyLister)
	if keys, err := l.ListKeys(ctx); err != nil || len(keys) != 0 {
		t.Fatalf("ListKeys before the import: %v, %v", keys, err)
	}
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{5}, 32))
	imp := st.(signer.KeyImporter)
	info, err := imp.ImportKey(ctx, priv, signer.Ed25519, ref.Label)
	if err != nil || !priv.Public().(ed25519.PublicKey).Equal(info.Public) {
		t.Fatalf("ImportKey: %+v, %v", info, err)
	}
	keys, err := l.ListKeys(ctx)
	if err != nil || len(keys) != 1 || !priv.Public().(ed25519.PublicKey).Equal(keys[0].Public) {
		t.Fatalf("ListKeys: %+v, %v", keys, err)
	}
	if _, err := imp.ImportKey(ctx, priv, signer.Ed25519, ref.Label); err == nil {
		t.Fatal("a second import overwrote the key file")
	}
	if _, err := imp.ImportKey(ctx, priv, signer.Ed25519, "other"); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Fatalf("ImportKey with another label: %v", err)
	}
	// The file signs, through Open.
	s, err := signer.Open(ctx, "inprocess:file="+path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	msg := []byte("through the file")
	sig, err := s.SignContext(ctx, msg)
	if err != nil || !ed25519.Verify(priv.Public().(ed25519.PublicKey), msg, sig) {
		t.Fatalf("sign with the imported key: %v", err)
	}
}
