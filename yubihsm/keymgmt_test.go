package yubihsm_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"testing"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/yubihsm"
	"github.com/signerkit/signerkit/yubihsm/yubihsmsim"
)

// TestWrapBackup backs a key up under a wrap key, deletes it, restores it
// into the same simulated device and into a second one holding the same
// wrap key, and checks that each copy signs as the original did (Ed25519
// is deterministic: the same key gives the same signature), verified with
// crypto/ed25519.
func TestWrapBackup(t *testing.T) {
	ctx := context.Background()
	_, url := sim(t, yubihsmsim.Config{})
	st := openStore(t, config(url))
	wrapKey := bytes.Repeat([]byte{0x5a}, 32)
	wk := yubihsm.WrapKey{ID: 7, Label: "backup", Domains: 0xffff,
		Caps: yubihsm.CapExportWrapped | yubihsm.CapImportWrapped, Delegated: yubihsm.CapAll}
	if id, err := st.PutWrapKey(ctx, wk, wrapKey); err != nil || id != 7 {
		t.Fatalf("PutWrapKey: %d, %v", id, err)
	}
	ki, err := st.GenerateExportableKey(ctx, signer.Ed25519, "validator")
	if err != nil {
		t.Fatal(err)
	}
	msg := []byte("a vote at height 7")
	s := openSigner(t, st, ki.Ref())
	want, err := s.SignContext(ctx, msg)
	s.Close()
	if err != nil || !ed25519.Verify(ki.Public.(ed25519.PublicKey), msg, want) {
		t.Fatalf("sign before export: %v", err)
	}
	blob, err := st.ExportWrapped(ctx, ki.Ref(), signer.KeyRef{Label: "backup"})
	if err != nil {
		t.Fatalf("ExportWrapped: %v", err)
	}
	if bytes.Contains(blob, ki.Public.(ed25519.PublicKey)) {
		t.Error("the export carries the public key in the clear")
	}
	if _, err := st.ImportWrapped(ctx, blob, signer.KeyRef{ID: "0007"}); !errors.Is(err, signer.ErrKeyExists) {
		t.Errorf("import over the live key: %v, want ErrKeyExists", err)
	}
	if err := st.DeleteKey(ctx, ki.Ref()); err != nil {
		t.Fatal(err)
	}
	restoreAndSign := func(st *yubihsm.Store, where string) {
		t.Helper()
		got, err := st.ImportWrapped(ctx, blob, signer.KeyRef{Label: "backup"})
		if err != nil {
			t.Fatalf("%s: ImportWrapped: %v", where, err)
		}
		if got.ID != ki.ID || got.Label != ki.Label || !got.Public.(ed25519.PublicKey).Equal(ki.Public) {
			t.Fatalf("%s: restored %+v, want %+v", where, got, ki)
		}
		s := openSigner(t, st, got.Ref())
		defer s.Close()
		sig, err := s.SignContext(ctx, msg)
		if err != nil || !bytes.Equal(sig, want) || !ed25519.Verify(got.Public.(ed25519.PublicKey), msg, sig) {
			t.Fatalf("%s: the restored key signs %x (%v), want %x", where, sig, err, want)
		}
	}
	restoreAndSign(st, "same device")

	// A second device with the same wrap key takes the backup; one with
	// another wrap key refuses it as a key that does not open.
	_, url2 := sim(t, yubihsmsim.Config{})
	st2 := openStore(t, config(url2))
	if _, err := st2.PutWrapKey(ctx, wk, bytes.Repeat([]byte{0x33}, 32)); err != nil {
		t.Fatal(err)
	}
	if _, err := st2.ImportWrapped(ctx, blob, signer.KeyRef{ID: "7"}); !errors.Is(err, signer.ErrInvalidKey) {
		t.Errorf("import under another wrap key: %v, want ErrInvalidKey", err)
	}
	if err := st2.DeleteObject(ctx, yubihsm.TypeWrapKey, 7); err != nil {
		t.Fatal(err)
	}
	if _, err := st2.PutWrapKey(ctx, wk, wrapKey); err != nil {
		t.Fatal(err)
	}
	damaged := bytes.Clone(blob)
	damaged[len(damaged)-1] ^= 1
	if _, err := st2.ImportWrapped(ctx, damaged, signer.KeyRef{ID: "7"}); !errors.Is(err, signer.ErrInvalidKey) {
		t.Errorf("damaged import: %v, want ErrInvalidKey", err)
	}
	if _, err := st2.ImportWrapped(ctx, blob[:10], signer.KeyRef{ID: "7"}); !errors.Is(err, signer.ErrInvalidKey) {
		t.Errorf("short import: %v, want ErrInvalidKey", err)
	}
	restoreAndSign(st2, "second device")
}

// TestWrapRefusals: a key generated without -exportable never leaves the
// device, nor does one through a wrap key without export-wrapped or whose
// delegated capabilities do not cover the key's.
func TestWrapRefusals(t *testing.T) {
	ctx := context.Background()
	_, url := sim(t, yubihsmsim.Config{})
	st := openStore(t, config(url))
	key := bytes.Repeat([]byte{1}, 16)
	for _, wk := range []yubihsm.WrapKey{
		{ID: 1, Label: "full", Domains: 1, Caps: yubihsm.CapExportWrapped, Delegated: yubihsm.CapAll},
		{ID: 2, Label: "import-only", Domains: 1, Caps: yubihsm.CapImportWrapped, Delegated: yubihsm.CapAll},
		{ID: 3, Label: "narrow", Domains: 1, Caps: yubihsm.CapExportWrapped, Delegated: yubihsm.CapSignEdDSA},
	} {
		if _, err := st.PutWrapKey(ctx, wk, key); err != nil {
			t.Fatal(err)
		}
	}
	fixed := generate(t, st, signer.Ed25519, "fixed")
	if _, err := st.ExportWrapped(ctx, fixed.Ref(), signer.KeyRef{Label: "full"}); !errors.Is(err, signer.ErrPermissionDenied) {
		t.Errorf("export of a non-exportable key: %v", err)
	}
	exp, err := st.GenerateExportableKey(ctx, signer.Ed25519, "exportable")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"import-only", "narrow"} {
		if _, err := st.ExportWrapped(ctx, exp.Ref(), signer.KeyRef{Label: w}); !errors.Is(err, signer.ErrPermissionDenied) {
			t.Errorf("export under %s: %v", w, err)
		}
	}
	if _, err := st.ExportWrapped(ctx, exp.Ref(), signer.KeyRef{Label: "absent"}); !errors.Is(err, signer.ErrKeyNotFound) {
		t.Errorf("export under a missing wrap key: %v", err)
	}
	if _, err := st.PutWrapKey(ctx, yubihsm.WrapKey{Label: "odd", Domains: 1}, make([]byte, 20)); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("a 20-byte wrap key: %v", err)
	}
	if _, err := st.ExportWrapped(ctx, exp.Ref(), signer.KeyRef{Label: "full"}); err != nil {
		t.Errorf("export under the full wrap key: %v", err)
	}
}

// TestSetupPrimitives: authentication keys, options and object lookups
// that the yubihsm setup command uses.
func TestSetupPrimitives(t *testing.T) {
	ctx := context.Background()
	_, url := sim(t, yubihsmsim.Config{})
	st := openStore(t, config(url))
	id, err := st.PutAuthKey(ctx, yubihsm.AuthKey{ID: 3, Label: "signer", Domains: 1, Caps: yubihsm.CapSignEdDSA}, []byte("new secret"))
	if err != nil || id != 3 {
		t.Fatalf("PutAuthKey: %d, %v", id, err)
	}
	if ok, err := st.HasObject(ctx, yubihsm.TypeAuthKey, 3); !ok || err != nil {
		t.Errorf("HasObject(3): %v, %v", ok, err)
	}
	if ok, err := st.HasObject(ctx, yubihsm.TypeAuthKey, 9); ok || err != nil {
		t.Errorf("HasObject(9): %v, %v", ok, err)
	}
	if err := st.SetOption(ctx, yubihsm.OptionCommandAudit, []byte{0x58, 1}); err != nil {
		t.Errorf("SetOption(command audit): %v", err)
	}
	if err := st.SetOption(ctx, yubihsm.OptionCommandAudit, []byte{0x58, 7}); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("SetOption(bad value): %v", err)
	}
	signerStore := openStore(t, yubihsm.Config{Connector: url, AuthKeyID: 3, Secret: signer.SecretBytes([]byte("new secret"))})
	if err := signerStore.SetOption(ctx, yubihsm.OptionForceAudit, []byte{1}); !errors.Is(err, signer.ErrPermissionDenied) {
		t.Errorf("SetOption by a sign-only key: %v", err)
	}
	if err := st.DeleteObject(ctx, yubihsm.TypeAuthKey, 3); err != nil {
		t.Fatal(err)
	}
}
