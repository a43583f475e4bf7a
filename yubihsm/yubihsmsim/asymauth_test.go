package yubihsmsim

import (
	"bytes"
	"crypto/aes"
	"crypto/ecdh"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"testing"

	"github.com/signerkit/signerkit/internal/scp03"
	"github.com/signerkit/signerkit/yubihsm"
)

// asymHost opens a session with the asymmetric authentication key authID
// as python-yubihsm's AsymmetricAuth.create_session does: it needs the
// device's public key, sends a fresh ephemeral key, derives the four
// keys (the KDF written out here block by block) and checks the receipt.
// It returns nil and the device's answer if the device refused, or nil
// and nil if the receipt does not verify.
func asymHost(t *testing.T, d *Device, authID uint16, static *ecdh.PrivateKey) (*host, []byte) {
	t.Helper()
	resp := handle(t, d, scp03.Frame{Cmd: CmdGetDevicePublicKey}.Bytes())
	if len(resp) != 3+1+64 || resp[3] != AlgAuthECP256 {
		t.Fatalf("device public key: %x", resp)
	}
	pkSD, err := ecdh.P256().NewPublicKey(append([]byte{4}, resp[4:]...))
	if err != nil {
		t.Fatal(err)
	}
	shsss, _ := static.ECDH(pkSD)
	esk, _ := ecdh.P256().GenerateKey(rand.Reader)
	epkOCE := esk.PublicKey().Bytes()
	resp = handle(t, d, scp03.Frame{Cmd: CmdCreateSession, Payload: append(binary.BigEndian.AppendUint16(nil, authID), epkOCE...)}.Bytes())
	if resp[0] != CmdCreateSession|0x80 {
		return nil, resp
	}
	if len(resp) != 3+1+65+16 {
		t.Fatalf("create session: %x", resp)
	}
	sid, epkSD, receipt := resp[3], resp[4:69], resp[69:]
	peer, err := ecdh.P256().NewPublicKey(epkSD)
	if err != nil {
		t.Fatal(err)
	}
	shsee, _ := esk.ECDH(peer)
	z := append(append([]byte{}, shsee...), shsss...)
	b1 := sha256.Sum256(append(append(append([]byte{}, z...), 0, 0, 0, 1), 0x3c, 0x88, 0x10))
	b2 := sha256.Sum256(append(append(append([]byte{}, z...), 0, 0, 0, 2), 0x3c, 0x88, 0x10))
	shs := append(b1[:], b2[:]...)
	if want := scp03.CMAC(shs[:16], epkSD, epkOCE); !bytes.Equal(want[:], receipt) {
		return nil, nil
	}
	h := &host{t: t, d: d, sid: sid, counter: 1}
	copy(h.chain[:], receipt)
	copy(h.keys.ENC[:], shs[16:32])
	copy(h.keys.MAC[:], shs[32:48])
	copy(h.keys.RMAC[:], shs[48:64])
	h.block, _ = aes.NewCipher(h.keys.ENC[:])
	return h, nil
}

// TestAsymmetricAuthentication: a P-256 authentication key put with its
// public key opens sessions as python-yubihsm opens them, which then run
// commands; another private key gets a receipt that does not verify and a
// session the device refuses; the refusals; the key exported under wrap
// and imported back still opens sessions.
func TestAsymmetricAuthentication(t *testing.T) {
	d := New(Config{})
	h, bad := newHost(t, d, 1, "password")
	if h == nil {
		t.Fatalf("session: %x", bad)
	}
	static, _ := ecdh.P256().GenerateKey(rand.Reader)
	put := append(keyTemplate(0x20, "asym", 1, CapSignEdDSA|CapGenerateAsym|CapExportableUnderWrap, AlgAuthECP256), binary.BigEndian.AppendUint64(nil, CapSignEdDSA)...)
	if r := h.do(CmdPutAuthKey, append(put, static.PublicKey().Bytes()[1:]...)); !bytes.Equal(r, []byte{CmdPutAuthKey | 0x80, 0, 2, 0, 0x20}) {
		t.Fatalf("put: %x", r)
	}
	if r := h.do(CmdGetObjectInfo, []byte{0, 0x20, TypeAuthKey}); r[0] != CmdGetObjectInfo|0x80 || binary.BigEndian.Uint16(r[3+10:]) != 64 || r[3+15] != AlgAuthECP256 {
		t.Errorf("object info: %x", r)
	}
	a, bad := asymHost(t, d, 0x20, static)
	if a == nil {
		t.Fatalf("asymmetric session: %x", bad)
	}
	if r := a.do(CmdEcho, []byte("hi")); !bytes.Equal(r, []byte{CmdEcho | 0x80, 0, 2, 'h', 'i'}) {
		t.Fatalf("echo: %x", r)
	}
	if r := a.do(CmdGenerateAsymKey, keyTemplate(5, "ed", 1, CapSignEdDSA, AlgEd25519)); r[0] != CmdGenerateAsymKey|0x80 {
		t.Fatalf("generate in the asymmetric session: %x", r)
	}
	if r := a.do(CmdSignEdDSA, []byte{0, 5, 'm'}); len(r) != 3+64 {
		t.Fatalf("sign: %x", r)
	}
	if r := a.do(CmdCloseSession, nil); r[0] != CmdCloseSession|0x80 {
		t.Fatalf("close: %x", r)
	}

	wrong, _ := ecdh.P256().GenerateKey(rand.Reader)
	if w, bad := asymHost(t, d, 0x20, wrong); w != nil || bad != nil {
		t.Fatalf("another private key: a receipt that verifies (%x)", bad)
	}
	for _, tc := range []struct {
		name string
		p    []byte
		code yubihsm.ErrorCode
	}{
		{"asymmetric key, a challenge", append([]byte{0, 0x20}, make([]byte, 8)...), yubihsm.CodeWrongLength},
		{"symmetric key, a point", append([]byte{0, 1}, static.PublicKey().Bytes()...), yubihsm.CodeWrongLength},
		{"point off the curve", append([]byte{0, 0x20, 4}, make([]byte, 64)...), yubihsm.CodeInvalidData},
		{"no such key", append([]byte{0, 0x21}, static.PublicKey().Bytes()...), yubihsm.CodeObjectNotFound},
	} {
		if r := handle(t, d, scp03.Frame{Cmd: CmdCreateSession, Payload: tc.p}.Bytes()); !isErr(r, tc.code) {
			t.Errorf("%s: %x, want %v", tc.name, r, tc.code)
		}
	}
	if r := handle(t, d, scp03.Frame{Cmd: CmdGetDevicePublicKey, Payload: []byte{0}}.Bytes()); !isErr(r, yubihsm.CodeWrongLength) {
		t.Errorf("device public key with data: %x", r)
	}
	if r := h.do(CmdPutAuthKey, append(put[:0:0], append(keyTemplate(0x22, "bad", 1, 0, AlgAuthECP256), make([]byte, 8+64)...)...)); !isErr(r, yubihsm.CodeInvalidData) {
		t.Errorf("put a point off the curve: %x", r)
	}

	wk := append(keyTemplate(1, "wrap", 1, CapExportWrapped|CapImportWrapped, AlgAES128CCMWrap), binary.BigEndian.AppendUint64(nil, CapAll)...)
	h.do(CmdPutWrapKey, append(wk, make([]byte, 16)...))
	blob := h.do(CmdExportWrapped, []byte{0, 1, TypeAuthKey, 0, 0x20})
	h.do(CmdDeleteObject, []byte{0, 0x20, TypeAuthKey})
	if r := h.do(CmdImportWrapped, append([]byte{0, 1}, blob[3:]...)); r[0] != CmdImportWrapped|0x80 {
		t.Fatalf("import: %x", r)
	}
	a, bad = asymHost(t, d, 0x20, static)
	if a == nil {
		t.Fatalf("after the round trip under wrap: %x", bad)
	}
	// Change Authentication Key with the key's own algorithm and X ‖ Y,
	// as python-yubihsm's change_public_key sends it; the key then opens
	// sessions with the new private key only.
	if r := h.do(CmdChangeAuthKey, append([]byte{0, 0x20, AlgAuthECP256}, make([]byte, 64)...)); !isErr(r, yubihsm.CodeInvalidID) {
		t.Errorf("change the key from another session: %x", r)
	}
	d.objects[objKey{TypeAuthKey, 0x20}].caps |= CapChangeAuthKey
	next, _ := ecdh.P256().GenerateKey(rand.Reader)
	if r := a.do(CmdChangeAuthKey, append([]byte{0, 0x20, AlgAuthAES}, make([]byte, 32)...)); !isErr(r, yubihsm.CodeInvalidData) {
		t.Errorf("change to an AES key: %x", r)
	}
	if r := a.do(CmdChangeAuthKey, append([]byte{0, 0x20, AlgAuthECP256}, next.PublicKey().Bytes()[1:]...)); !bytes.Equal(r, []byte{CmdChangeAuthKey | 0x80, 0, 2, 0, 0x20}) {
		t.Fatalf("change the public key: %x", r)
	}
	if w, _ := asymHost(t, d, 0x20, static); w != nil {
		t.Error("the old private key still opens sessions")
	}
	if n, bad := asymHost(t, d, 0x20, next); n == nil {
		t.Errorf("the new private key: %x", bad)
	}
}

// FuzzCreateSessionAsym feeds arbitrary Create Session payloads to a
// device holding a symmetric and an asymmetric authentication key: an
// error frame or a session answer of the right size, never a panic.
func FuzzCreateSessionAsym(f *testing.F) {
	static, _ := ecdh.P256().GenerateKey(rand.Reader)
	f.Add(append([]byte{0, 2}, static.PublicKey().Bytes()...))
	f.Add(append([]byte{0, 1}, make([]byte, 8)...))
	f.Add(append([]byte{0, 2, 4}, make([]byte, 64)...))
	f.Fuzz(func(t *testing.T, p []byte) {
		d := New(Config{Rand: bytes.NewReader(bytes.Repeat([]byte{5}, 1<<12))})
		pub, _ := authPublic(static.PublicKey().Bytes()[1:])
		d.objects[objKey{TypeAuthKey, 2}] = &object{id: 2, typ: TypeAuthKey, alg: AlgAuthECP256, domains: 1, authPub: pub}
		r := d.createSession(p)
		switch {
		case r[0] == CmdError:
		case len(p) == 2+pointLen && len(r) == 3+1+65+16:
		case len(p) == 2+8 && len(r) == 3+17:
		default:
			t.Fatalf("%x answered %x", p, r)
		}
	})
}
