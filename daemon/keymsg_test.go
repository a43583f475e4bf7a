package daemon

import (
	"context"
	"crypto/ed25519"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/signerkit/signerkit/keybase/gnokeyhome" // registers gnokeyhome:
	"github.com/signerkit/signerkit/signer"
)

// gnokeyHome copies the gnokey home fixture of package gnokeyhome (keys
// encrypted under "fixture passphrase") into a temporary directory.
func gnokeyHome(t *testing.T) string {
	t.Helper()
	src := filepath.Join("..", "keybase", "gnokeyhome", "testdata", "gnokey-home")
	home := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(home, rel), 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(home, rel), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	return home
}

// TestGnokeyHomeKeys: the daemon serves a gnokey home's Ed25519 key, and
// refuses its secp256k1 one (gnokey's default, an account key) with an
// operator's message naming the key's kind and what gno v1.7.1 takes.
func TestGnokeyHomeKeys(t *testing.T) {
	home := gnokeyHome(t)
	open := func(ctx context.Context, uri string) (signer.Signer, error) { return signer.Open(ctx, uri) }
	log := slog.New(slog.DiscardHandler)
	uri := func(label string) string {
		return "gnokeyhome:home=" + home + ";label=" + label + "?pin-value=fixture%20passphrase"
	}
	_, err := openBackend(context.Background(), uri("validator"), open, log, newMetrics("test"), time.Second, time.Second)
	if !errors.Is(err, signer.ErrUnsupported) || !strings.Contains(err.Error(), "secp256k1") ||
		!strings.Contains(err.Error(), "gno v1.7.1") || strings.Contains(err.Error(), "fixture") {
		t.Fatalf("a secp256k1 gnokey key: %v", err)
	}
	b, err := openBackend(context.Background(), uri("my%20key%2Fed25519%20%E2%9C%93"), open, log, newMetrics("test"), time.Second, time.Second)
	if err != nil {
		t.Fatalf("an Ed25519 gnokey key: %v", err)
	}
	defer b.Close()
	msg := []byte("a vote")
	sig, err := b.SignContext(context.Background(), msg)
	if err != nil || !ed25519.Verify(b.Public().(ed25519.PublicKey), msg, sig) {
		t.Fatalf("sign with the gnokey key: %v", err)
	}
}
