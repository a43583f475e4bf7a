package yubihsmsim

import (
	"bytes"
	"crypto/ed25519"
	"encoding/binary"
	"testing"

	"github.com/signerkit/signerkit/yubihsm"
)

// TestGenerateWrapKey: a wrap key generated in the device (which
// yubihsm-go cannot parse the answer of) exports and imports a key, and
// the key signs as before; the refusals of a session key without the
// capabilities, of delegated capabilities past the session key's, and of
// an export of an authentication key the wrap key's delegated
// capabilities do not cover.
func TestGenerateWrapKey(t *testing.T) {
	d := New(Config{})
	d.AddAuthKey(5, "narrow", []byte("narrow"), CapGenerateWrapKey|CapExportWrapped, CapExportWrapped, 0xffff)
	h, bad := newHost(t, d, 1, "password")
	if h == nil {
		t.Fatalf("session: %x", bad)
	}
	gen := append(keyTemplate(0x20, "gen", 1, CapExportWrapped|CapImportWrapped, AlgAES192CCMWrap),
		binary.BigEndian.AppendUint64(nil, CapSignEdDSA|CapExportableUnderWrap)...)
	if resp := h.do(CmdGenerateWrapKey, gen); !bytes.Equal(resp, []byte{CmdGenerateWrapKey | 0x80, 0, 2, 0, 0x20}) {
		t.Fatalf("generate wrap key: %x", resp)
	}
	if resp := h.do(CmdGenerateWrapKey, append(bytes.Clone(gen), 1)); !isErr(resp, yubihsm.CodeWrongLength) {
		t.Errorf("generate wrap key with key bytes: %x", resp)
	}
	if resp := h.do(CmdGenerateAsymKey, keyTemplate(0x30, "k", 1, CapSignEdDSA|CapExportableUnderWrap, AlgEd25519)); resp[0] != CmdGenerateAsymKey|0x80 {
		t.Fatalf("generate: %x", resp)
	}
	msg := []byte("vote")
	sig := h.do(CmdSignEdDSA, append([]byte{0, 0x30}, msg...))
	pub := h.do(CmdGetPublicKey, []byte{0, 0x30})[4:]
	if !ed25519.Verify(pub, msg, sig[3:]) {
		t.Fatal("signature does not verify")
	}
	exp := h.do(CmdExportWrapped, []byte{0, 0x20, TypeAsymmetric, 0, 0x30})
	if exp[0] != CmdExportWrapped|0x80 {
		t.Fatalf("export: %x", exp)
	}
	// Format 1 (with the seed, firmware 2.4) is not the sim's.
	if resp := h.do(CmdExportWrapped, []byte{0, 0x20, TypeAsymmetric, 0, 0x30, 1}); !isErr(resp, yubihsm.CodeInvalidData) {
		t.Errorf("export format 1: %x", resp)
	}
	// The authentication key's capabilities are outside the wrap key's
	// delegated ones.
	if resp := h.do(CmdExportWrapped, []byte{0, 0x20, TypeAuthKey, 0, 1}); !isErr(resp, yubihsm.CodeInsufficientPermissions) {
		t.Errorf("export of the authentication key: %x", resp)
	}
	h.do(CmdDeleteObject, []byte{0, 0x30, TypeAsymmetric})
	imp := h.do(CmdImportWrapped, append([]byte{0, 0x20}, exp[3:]...))
	if !bytes.Equal(imp, []byte{CmdImportWrapped | 0x80, 0, 3, TypeAsymmetric, 0, 0x30}) {
		t.Fatalf("import: %x", imp)
	}
	if again := h.do(CmdSignEdDSA, append([]byte{0, 0x30}, msg...)); !bytes.Equal(again, sig) {
		t.Fatal("the imported key signs differently")
	}
	info := h.do(CmdGetObjectInfo, []byte{0, 0x30, TypeAsymmetric})
	if origin := info[3+8+2+2+2+1+1+1]; origin != 1|originWrapped {
		t.Errorf("origin %#x, want generated and imported under wrap", origin)
	}

	n, bad := newHost(t, d, 5, "narrow")
	if n == nil {
		t.Fatalf("session: %x", bad)
	}
	tooWide := append(keyTemplate(0x21, "wide", 1, CapExportWrapped, AlgAES128CCMWrap), binary.BigEndian.AppendUint64(nil, CapSignEdDSA)...)
	if resp := n.do(CmdGenerateWrapKey, tooWide); !isErr(resp, yubihsm.CodeInsufficientPermissions) {
		t.Errorf("delegated capabilities past the session key's: %x", resp)
	}
	if resp := n.do(CmdPutWrapKey, append(bytes.Clone(tooWide), make([]byte, 16)...)); !isErr(resp, yubihsm.CodeInsufficientPermissions) {
		t.Errorf("put wrap key without the capability: %x", resp)
	}
	if resp := n.do(CmdImportWrapped, append([]byte{0, 0x20}, exp[3:]...)); !isErr(resp, yubihsm.CodeInsufficientPermissions) {
		t.Errorf("import without the capability: %x", resp)
	}

	// Domains: a wrap key in every domain, a key in domain 1, and a
	// session key in domain 2 only, which sees the wrap key but may not
	// make an object in domain 1.
	all := append(keyTemplate(0x23, "all domains", 0xffff, CapExportWrapped|CapImportWrapped, AlgAES128CCMWrap),
		binary.BigEndian.AppendUint64(nil, CapAll)...)
	if resp := h.do(CmdPutWrapKey, append(all, make([]byte, 16)...)); resp[0] != CmdPutWrapKey|0x80 {
		t.Fatalf("put wrap key: %x", resp)
	}
	exp2 := h.do(CmdExportWrapped, []byte{0, 0x23, TypeAsymmetric, 0, 0x30})
	h.do(CmdDeleteObject, []byte{0, 0x30, TypeAsymmetric})
	d.AddAuthKey(6, "domain 2", []byte("d2"), CapImportWrapped|CapExportWrapped, CapAll, 2)
	d2, bad := newHost(t, d, 6, "d2")
	if d2 == nil {
		t.Fatalf("session: %x", bad)
	}
	if resp := d2.do(CmdImportWrapped, append([]byte{0, 0x23}, exp2[3:]...)); !isErr(resp, yubihsm.CodeInsufficientPermissions) {
		t.Errorf("import into a domain the session key lacks: %x", resp)
	}
	h.do(CmdGenerateAsymKey, keyTemplate(0x31, "d1", 1, CapSignEdDSA|CapExportableUnderWrap, AlgEd25519))
	if resp := d2.do(CmdExportWrapped, []byte{0, 0x23, TypeAsymmetric, 0, 0x31}); !isErr(resp, yubihsm.CodeObjectNotFound) {
		t.Errorf("export of an object in no domain of the session key: %x", resp)
	}
	if resp := h.do(CmdImportWrapped, append([]byte{0, 0x23}, exp2[3:]...)); resp[0] != CmdImportWrapped|0x80 {
		t.Errorf("import by a key in every domain: %x", resp)
	}
}
