package yubihsmsim

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/signerkit/signerkit/internal/scp03"
	"github.com/signerkit/signerkit/yubihsm"
)

// sdkStorage reads Get Storage Info as libyubihsm's
// yh_util_get_storage_info does: five big-endian 16-bit numbers.
func sdkStorage(t *testing.T, h *host) (records, freeRecords, pagesTotal, freePages, pageSize uint16) {
	t.Helper()
	data, err := sdkPayload(h.do(CmdGetStorageInfo, nil), CmdGetStorageInfo)
	if err != nil || len(data) != 10 {
		t.Fatalf("storage info: %v, %x", err, data)
	}
	u := func(i int) uint16 { return binary.BigEndian.Uint16(data[2*i:]) }
	return u(0), u(1), u(2), u(3), u(4)
}

// sdkPutOpaque builds Put Opaque as python-yubihsm's Opaque.put does: id,
// label padded to 40 bytes, domains, capabilities, algorithm, then the
// data; the answer is the two-byte id.
func sdkPutOpaque(h *host, id uint16, label string, domains uint16, caps uint64, alg byte, data []byte) (uint16, []byte) {
	resp := h.do(CmdPutOpaque, append(keyTemplate(id, label, domains, caps, alg), data...))
	out, err := sdkPayload(resp, CmdPutOpaque)
	if err != nil || len(out) != 2 {
		return 0, resp
	}
	return binary.BigEndian.Uint16(out), nil
}

func TestStorageInfo(t *testing.T) {
	d := New(Config{})
	h, bad := newHost(t, d, 1, "password")
	if h == nil {
		t.Fatalf("session: %x", bad)
	}
	rec, freeRec, pg, freePg, size := sdkStorage(t, h)
	if rec != StorageRecords || freeRec != StorageRecords-1 || pg != StoragePages || freePg != StoragePages-1 || size != StoragePageSize {
		t.Fatalf("storage = %d %d %d %d %d", rec, freeRec, pg, freePg, size)
	}
	if _, bad := sdkPutOpaque(h, 5, "blob", 1, 0, AlgOpaqueData, make([]byte, 300)); bad != nil {
		t.Fatalf("put opaque: %x", bad)
	}
	_, freeRec, _, freePg, _ = sdkStorage(t, h)
	if freeRec != StorageRecords-2 || freePg != StoragePages-1-3 {
		t.Fatalf("after a 300-byte opaque: %d free records, %d free pages", freeRec, freePg)
	}
	if resp := h.do(CmdGetStorageInfo, []byte{0}); !isErr(resp, yubihsm.CodeWrongLength) {
		t.Errorf("storage info with data: %x", resp)
	}
}

func TestOpaque(t *testing.T) {
	d := New(Config{})
	h, bad := newHost(t, d, 1, "password")
	if h == nil {
		t.Fatalf("session: %x", bad)
	}
	cert := []byte("not really DER, the device does not look")
	id, bad := sdkPutOpaque(h, 0x20, "cert", 1, 0, AlgOpaqueX509, cert)
	if bad != nil || id != 0x20 {
		t.Fatalf("put opaque: %d %x", id, bad)
	}
	if _, bad := sdkPutOpaque(h, 0x20, "again", 1, 0, AlgOpaqueData, []byte{1}); !isErr(bad, yubihsm.CodeObjectExists) {
		t.Errorf("put over an opaque: %x", bad)
	}
	got, err := sdkPayload(h.do(CmdGetOpaque, []byte{0, 0x20}), CmdGetOpaque)
	if err != nil || !bytes.Equal(got, cert) {
		t.Fatalf("get opaque: %v %q", err, got)
	}
	// Object info: type opaque, size the data's, algorithm, imported.
	info, err := sdkPayload(h.do(CmdGetObjectInfo, []byte{0, 0x20, TypeOpaque}), CmdGetObjectInfo)
	if err != nil || len(info) != 66 || binary.BigEndian.Uint16(info[10:]) != uint16(len(cert)) || info[14] != TypeOpaque || info[15] != AlgOpaqueX509 || info[17] != 2 {
		t.Fatalf("object info: %v %x", err, info)
	}
	// A random id for id 0; the SDK reads it back from the answer.
	id, bad = sdkPutOpaque(h, 0, "anon", 1, 0, AlgOpaqueData, []byte{1, 2})
	if bad != nil || id == 0 {
		t.Fatalf("put opaque id 0: %d %x", id, bad)
	}
	for _, c := range []struct {
		name string
		p    []byte
		code yubihsm.ErrorCode
	}{
		{"no data", keyTemplate(0x21, "", 1, 0, AlgOpaqueData), yubihsm.CodeWrongLength},
		{"wrong algorithm", append(keyTemplate(0x21, "", 1, 0, AlgEd25519), 1), yubihsm.CodeInvalidData},
		{"no domain", append(keyTemplate(0x21, "", 0, 0, AlgOpaqueData), 1), yubihsm.CodeInsufficientPermissions},
	} {
		if resp := h.do(CmdPutOpaque, c.p); !isErr(resp, c.code) {
			t.Errorf("put opaque, %s: %x", c.name, resp)
		}
	}
	if _, bad := sdkPutOpaque(h, 0x22, "max", 1, 0, AlgOpaqueData, make([]byte, MaxOpaque)); bad != nil {
		t.Fatalf("put opaque of MaxOpaque: %x", bad)
	}
	if resp := h.do(CmdGetOpaque, []byte{0, 0x99}); !isErr(resp, yubihsm.CodeObjectNotFound) {
		t.Errorf("get missing opaque: %x", resp)
	}

	// Without the capabilities: INSUFFICIENT PERMISSIONS; without the
	// domain, not found.
	d.AddAuthKey(2, "noopaque", []byte("pw2"), CapAll&^(CapGetOpaque|CapPutOpaque|CapDeleteOpaque), CapAll, 0xffff)
	d.AddAuthKey(3, "domain2", []byte("pw3"), CapAll, CapAll, 2)
	h2, bad := newHost(t, d, 2, "pw2")
	if h2 == nil {
		t.Fatalf("session 2: %x", bad)
	}
	if resp := h2.do(CmdGetOpaque, []byte{0, 0x20}); !isErr(resp, yubihsm.CodeInsufficientPermissions) {
		t.Errorf("get opaque without the capability: %x", resp)
	}
	if _, bad := sdkPutOpaque(h2, 0x23, "", 1, 0, AlgOpaqueData, []byte{1}); !isErr(bad, yubihsm.CodeInsufficientPermissions) {
		t.Errorf("put opaque without the capability: %x", bad)
	}
	if resp := h2.do(CmdDeleteObject, []byte{0, 0x20, TypeOpaque}); !isErr(resp, yubihsm.CodeInsufficientPermissions) {
		t.Errorf("delete opaque without the capability: %x", resp)
	}
	h3, bad := newHost(t, d, 3, "pw3")
	if h3 == nil {
		t.Fatalf("session 3: %x", bad)
	}
	if resp := h3.do(CmdGetOpaque, []byte{0, 0x20}); !isErr(resp, yubihsm.CodeObjectNotFound) {
		t.Errorf("get opaque outside the domains: %x", resp)
	}
	if resp := h.do(CmdDeleteObject, []byte{0, 0x20, TypeOpaque}); !bytes.Equal(resp, []byte{CmdDeleteObject | 0x80, 0, 0}) {
		t.Errorf("delete opaque: %x", resp)
	}
}

// sdkPutAuthKey builds Put Authentication Key as python-yubihsm's
// AuthenticationKey.put_derived does: the template with algorithm
// AES-128 Yubico authentication, delegated capabilities, then the
// password's K-ENC and K-MAC.
func sdkPutAuthKey(id uint16, label string, domains uint16, caps, delegated uint64, password string) []byte {
	enc, mac := scp03.AuthKey([]byte(password))
	p := binary.BigEndian.AppendUint64(keyTemplate(id, label, domains, caps, AlgAuthAES), delegated)
	return append(append(p, enc[:]...), mac[:]...)
}

// sdkChangeAuthKey builds Change Authentication Key as
// AuthenticationKey.change_password does: id, algorithm, K-ENC, K-MAC.
func sdkChangeAuthKey(id uint16, password string) []byte {
	enc, mac := scp03.AuthKey([]byte(password))
	p := append(binary.BigEndian.AppendUint16(nil, id), AlgAuthAES)
	return append(append(p, enc[:]...), mac[:]...)
}

func TestPutAndChangeAuthKey(t *testing.T) {
	d := New(Config{})
	h, bad := newHost(t, d, 1, "password")
	if h == nil {
		t.Fatalf("session: %x", bad)
	}
	caps := CapSignEdDSA | CapChangeAuthKey | CapGetPseudoRandom
	id, err := sdkPayload(h.do(CmdPutAuthKey, sdkPutAuthKey(7, "operator", 1, caps, CapSignEdDSA, "first")), CmdPutAuthKey)
	if err != nil || !bytes.Equal(id, []byte{0, 7}) {
		t.Fatalf("put auth key: %v %x", err, id)
	}
	if resp := h.do(CmdPutAuthKey, sdkPutAuthKey(7, "again", 1, caps, 0, "x")); !isErr(resp, yubihsm.CodeObjectExists) {
		t.Errorf("put over an auth key: %x", resp)
	}
	info, err := sdkPayload(h.do(CmdGetObjectInfo, []byte{0, 7, TypeAuthKey}), CmdGetObjectInfo)
	if err != nil || binary.BigEndian.Uint64(info) != caps || binary.BigEndian.Uint64(info[58:]) != CapSignEdDSA || info[15] != AlgAuthAES {
		t.Fatalf("auth key info: %v %x", err, info)
	}
	h7, bad := newHost(t, d, 7, "first")
	if h7 == nil {
		t.Fatalf("session with the new key: %x", bad)
	}
	// A key that may not put keys; one that asks for more than it may
	// delegate; the wrong algorithm and length.
	if resp := h7.do(CmdPutAuthKey, sdkPutAuthKey(8, "", 1, 0, 0, "x")); !isErr(resp, yubihsm.CodeInsufficientPermissions) {
		t.Errorf("put auth key without the capability: %x", resp)
	}
	d.AddAuthKey(9, "limited", []byte("pw9"), CapPutAuthKey, CapSignEdDSA, 1)
	h9, bad := newHost(t, d, 9, "pw9")
	if h9 == nil {
		t.Fatalf("session 9: %x", bad)
	}
	if resp := h9.do(CmdPutAuthKey, sdkPutAuthKey(8, "", 1, CapSignECDSA, 0, "x")); !isErr(resp, yubihsm.CodeInsufficientPermissions) {
		t.Errorf("put auth key beyond the delegated capabilities: %x", resp)
	}
	if resp := h9.do(CmdPutAuthKey, sdkPutAuthKey(8, "", 2, 0, 0, "x")); !isErr(resp, yubihsm.CodeInsufficientPermissions) {
		t.Errorf("put auth key outside the domains: %x", resp)
	}
	bad1 := sdkPutAuthKey(8, "", 1, 0, 0, "x")
	bad1[52] = AlgEd25519
	if resp := h.do(CmdPutAuthKey, bad1); !isErr(resp, yubihsm.CodeInvalidData) {
		t.Errorf("put auth key, wrong algorithm: %x", resp)
	}
	if resp := h.do(CmdPutAuthKey, sdkPutAuthKey(8, "", 1, 0, 0, "x")[:80]); !isErr(resp, yubihsm.CodeWrongLength) {
		t.Errorf("put auth key, short: %x", resp)
	}

	// Change: the SDK checks the answer is the key's id. The session
	// goes on; new sessions need the new password.
	got, err := sdkPayload(h7.do(CmdChangeAuthKey, sdkChangeAuthKey(7, "second")), CmdChangeAuthKey)
	if err != nil || !bytes.Equal(got, []byte{0, 7}) {
		t.Fatalf("change auth key: %v %x", err, got)
	}
	if resp := h7.do(CmdGetPseudoRandom, []byte{0, 4}); resp[0] != CmdGetPseudoRandom|0x80 {
		t.Errorf("session after the change: %x", resp)
	}
	if h, _ := newHost(t, d, 7, "first"); h != nil {
		t.Error("old password still opens a session")
	}
	if h, bad := newHost(t, d, 7, "second"); h == nil {
		t.Errorf("new password: %x", bad)
	}
	// Another key than the session's: INVALID ID, as python-yubihsm's
	// test_change_password expects; without the capability: INSUFFICIENT
	// PERMISSIONS.
	if resp := h7.do(CmdChangeAuthKey, sdkChangeAuthKey(1, "stolen")); !isErr(resp, yubihsm.CodeInvalidID) {
		t.Errorf("change another key: %x", resp)
	}
	if resp := h9.do(CmdChangeAuthKey, sdkChangeAuthKey(9, "new")); !isErr(resp, yubihsm.CodeInsufficientPermissions) {
		t.Errorf("change without the capability: %x", resp)
	}
	if resp := h.do(CmdChangeAuthKey, sdkChangeAuthKey(1, "x")[:20]); !isErr(resp, yubihsm.CodeWrongLength) {
		t.Errorf("change, short: %x", resp)
	}
}
