//go:build cgo

package pkcs11_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/sha512"
	"errors"
	"math/big"
	"testing"

	"github.com/signerkit/signerkit/signer"
)

// TestWrapBackup exports keys from a real SoftHSM2 token under an AES
// wrap key (C_WrapKey), deletes them, imports them back (C_UnwrapKey),
// and checks that they sign as before, verified with crypto/ed25519 and
// crypto/ecdsa; and that keys made without -exportable do not leave.
func TestWrapBackup(t *testing.T) {
	ctx := context.Background()
	_, tok := openToken(t)
	if _, err := tok.GenerateWrapKey(ctx, "backup"); err != nil {
		t.Fatalf("GenerateWrapKey: %v", err)
	}
	if _, err := tok.GenerateWrapKey(ctx, "backup"); !errors.Is(err, signer.ErrKeyExists) {
		t.Errorf("second wrap key labelled backup: %v", err)
	}
	if _, err := tok.GenerateWrapKey(ctx, "other"); err != nil {
		t.Fatal(err)
	}
	msg := []byte("a vote at height 9")
	// SoftHSM2 2.6.1 wraps EC private keys but no Edwards keys: it
	// answers CKR_KEY_NOT_WRAPPABLE, which ExportWrapped reports as
	// ErrUnsupported.
	ed, err := tok.GenerateExportableKey(ctx, signer.Ed25519, "exp-ed")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tok.ExportWrapped(ctx, ed.Ref(), signer.KeyRef{Label: "backup"}); !errors.Is(err, signer.ErrUnsupported) {
		t.Errorf("Ed25519 export on SoftHSM2: %v, want ErrUnsupported", err)
	}
	for _, alg := range []signer.Algorithm{signer.ECDSAP256, signer.ECDSAP384} {
		label := "exp-" + alg.String()
		ki, err := tok.GenerateExportableKey(ctx, alg, label)
		if err != nil {
			t.Fatalf("%v: GenerateExportableKey: %v", alg, err)
		}
		generateSig(t, ctx, tok, ki, msg)
		blob, err := tok.ExportWrapped(ctx, ki.Ref(), signer.KeyRef{Label: "backup"})
		if err != nil {
			t.Fatalf("%v: ExportWrapped: %v", alg, err)
		}
		if _, err := tok.ImportWrapped(ctx, blob, signer.KeyRef{Label: "backup"}); !errors.Is(err, signer.ErrKeyExists) {
			t.Errorf("%v: import over the live key: %v", alg, err)
		}
		if err := tok.DeleteKey(ctx, ki.Ref()); err != nil {
			t.Fatal(err)
		}
		if _, err := tok.ImportWrapped(ctx, blob, signer.KeyRef{Label: "other"}); !errors.Is(err, signer.ErrInvalidKey) {
			t.Errorf("%v: import under another wrap key: %v, want ErrInvalidKey", alg, err)
		}
		damaged := bytes.Clone(blob)
		damaged[len(damaged)-3] ^= 1
		if _, err := tok.ImportWrapped(ctx, damaged, signer.KeyRef{Label: "backup"}); !errors.Is(err, signer.ErrInvalidKey) {
			t.Errorf("%v: damaged import: %v, want ErrInvalidKey", alg, err)
		}
		got, err := tok.ImportWrapped(ctx, blob, signer.KeyRef{Label: "backup"})
		if err != nil {
			t.Fatalf("%v: ImportWrapped: %v", alg, err)
		}
		if got.Label != ki.Label || got.ID != ki.ID || !got.Public.(interface{ Equal(crypto.PublicKey) bool }).Equal(ki.Public) {
			t.Fatalf("%v: restored %+v, want %+v", alg, got, ki)
		}
		generateSig(t, ctx, tok, got, msg) // ECDSA is randomised: each signature verifies
	}
	fixed, err := tok.GenerateKey(ctx, signer.Ed25519, "fixed")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tok.ExportWrapped(ctx, fixed.Ref(), signer.KeyRef{Label: "backup"}); !errors.Is(err, signer.ErrPermissionDenied) {
		t.Errorf("export of a key made without -exportable: %v, want ErrPermissionDenied", err)
	}
	if _, err := tok.ExportWrapped(ctx, fixed.Ref(), signer.KeyRef{Label: "absent"}); !errors.Is(err, signer.ErrKeyNotFound) {
		t.Errorf("export under a missing wrap key: %v", err)
	}
}

// generateSig signs msg with the key ki names and verifies it with the
// standard library.
func generateSig(t *testing.T, ctx context.Context, tok interface {
	OpenKey(context.Context, signer.KeyRef) (signer.Signer, error)
}, ki signer.KeyInfo, msg []byte) []byte {
	t.Helper()
	s, err := tok.OpenKey(ctx, ki.Ref())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sig, err := s.SignContext(ctx, msg)
	if err != nil {
		t.Fatal(err)
	}
	switch pub := ki.Public.(type) {
	case ed25519.PublicKey:
		if !ed25519.Verify(pub, msg, sig) {
			t.Fatal("Ed25519 signature does not verify")
		}
	case *ecdsa.PublicKey:
		// raw r ‖ s over SHA-256 (P-256) or SHA-384 (P-384)
		var d []byte
		if pub.Curve.Params().BitSize == 384 {
			h := sha512.Sum384(msg)
			d = h[:]
		} else {
			h := sha256.Sum256(msg)
			d = h[:]
		}
		n := len(sig) / 2
		if len(sig) != 2*(pub.Curve.Params().BitSize/8) || !ecdsa.Verify(pub, d, new(big.Int).SetBytes(sig[:n]), new(big.Int).SetBytes(sig[n:])) {
			t.Fatal("ECDSA signature does not verify")
		}
	}
	return sig
}
