package yubihsmsim

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"hash"
	"testing"
	"time"

	"github.com/signerkit/signerkit/yubihsm"
)

// TestHMAC: Sign HMAC answers what crypto/hmac computes with the key put,
// Verify HMAC answers 1 for that MAC and 0 for another, a generated
// SHA-512 key's MACs verify on the device and are 64 bytes, an HMAC key
// exported under wrap imports back and gives the same MAC, and the
// refusals answer the device's codes.
func TestHMAC(t *testing.T) {
	d := New(Config{})
	h, bad := newHost(t, d, 1, "password")
	if h == nil {
		t.Fatalf("session: %x", bad)
	}
	key := bytes.Repeat([]byte{0x0b}, 20)
	caps := CapSignHMAC | CapVerifyHMAC | CapExportableUnderWrap
	if r := h.do(CmdPutHMACKey, append(keyTemplate(7, "hmac", 1, caps, AlgHMACSHA256), key...)); !bytes.Equal(r, []byte{CmdPutHMACKey | 0x80, 0, 2, 0, 7}) {
		t.Fatalf("put: %x", r)
	}
	msg := []byte("Hi There")
	m := hmac.New(sha256.New, key)
	m.Write(msg)
	want := m.Sum(nil)
	r, stages := h.doStages(CmdSignHMAC, append([]byte{0, 7}, msg...))
	if !bytes.Equal(r, append([]byte{CmdSignHMAC | 0x80, 0, 32}, want...)) {
		t.Fatalf("sign: %x, want %x", r, want)
	}
	if len(stages) != 1 || stages[0].Duration != 4*time.Millisecond {
		t.Errorf("HMAC-SHA256 modeled %v", stages)
	}
	verify := func(id uint16, tag, data []byte) []byte {
		return h.do(CmdVerifyHMAC, append(append(binary.BigEndian.AppendUint16(nil, id), tag...), data...))
	}
	if r := verify(7, want, msg); !bytes.Equal(r, []byte{CmdVerifyHMAC | 0x80, 0, 1, 1}) {
		t.Errorf("verify the MAC: %x", r)
	}
	if r := verify(7, want, []byte("Hi there")); !bytes.Equal(r, []byte{CmdVerifyHMAC | 0x80, 0, 1, 0}) {
		t.Errorf("verify another message: %x", r)
	}

	if r := h.do(CmdGenerateHMACKey, keyTemplate(8, "gen", 1, caps, AlgHMACSHA512)); r[0] != CmdGenerateHMACKey|0x80 {
		t.Fatalf("generate: %x", r)
	}
	r, stages = h.doStages(CmdSignHMAC, append([]byte{0, 8}, msg...))
	if len(r) != 3+64 || len(stages) != 1 || stages[0].Duration != 243*time.Millisecond {
		t.Fatalf("SHA-512 MAC %x, modeled %v", r, stages)
	}
	if v := verify(8, r[3:], msg); !bytes.Equal(v, []byte{CmdVerifyHMAC | 0x80, 0, 1, 1}) {
		t.Errorf("verify the generated key's MAC: %x", v)
	}

	wk := append(keyTemplate(1, "wrap", 1, CapExportWrapped|CapImportWrapped, AlgAES128CCMWrap), binary.BigEndian.AppendUint64(nil, CapAll)...)
	h.do(CmdPutWrapKey, append(wk, make([]byte, 16)...))
	blob := h.do(CmdExportWrapped, []byte{0, 1, TypeHMACKey, 0, 7})
	h.do(CmdDeleteObject, []byte{0, 7, TypeHMACKey})
	if r := h.do(CmdImportWrapped, append([]byte{0, 1}, blob[3:]...)); !bytes.Equal(r, []byte{CmdImportWrapped | 0x80, 0, 3, TypeHMACKey, 0, 7}) {
		t.Fatalf("import: %x", r)
	}
	if r := h.do(CmdSignHMAC, append([]byte{0, 7}, msg...)); !bytes.Equal(r[3:], want) {
		t.Errorf("after the round trip: %x", r)
	}

	d.AddAuthKey(2, "no hmac", []byte("pw2"), CapAll&^CapSignHMAC, CapAll, 0xffff)
	other, _ := newHost(t, d, 2, "pw2")
	for _, tc := range []struct {
		name string
		resp []byte
		code yubihsm.ErrorCode
	}{
		{"key longer than the block", h.do(CmdPutHMACKey, append(keyTemplate(9, "long", 1, caps, AlgHMACSHA256), make([]byte, 65)...)), yubihsm.CodeInvalidData},
		{"no key", h.do(CmdPutHMACKey, keyTemplate(9, "empty", 1, caps, AlgHMACSHA256)), yubihsm.CodeWrongLength},
		{"not an HMAC algorithm", h.do(CmdPutHMACKey, append(keyTemplate(9, "p", 1, caps, AlgP256), 1)), yubihsm.CodeInvalidData},
		{"generate with a key", h.do(CmdGenerateHMACKey, append(keyTemplate(9, "g", 1, caps, AlgHMACSHA1), 1)), yubihsm.CodeWrongLength},
		{"no data", h.do(CmdSignHMAC, []byte{0, 7}), yubihsm.CodeWrongLength},
		{"short MAC", verify(7, want[:31], nil), yubihsm.CodeWrongLength},
		{"no such key", h.do(CmdSignHMAC, []byte{0, 9, 1}), yubihsm.CodeObjectNotFound},
		{"session without sign-hmac", other.do(CmdSignHMAC, []byte{0, 7, 1}), yubihsm.CodeInsufficientPermissions},
	} {
		if !isErr(tc.resp, tc.code) {
			t.Errorf("%s: %x, want %v", tc.name, tc.resp, tc.code)
		}
	}
	if r := h.do(CmdGenerateHMACKey, keyTemplate(10, "sign only", 1, CapSignHMAC, AlgHMACSHA384)); r[0] != CmdGenerateHMACKey|0x80 {
		t.Fatalf("generate: %x", r)
	}
	if r := verify(10, make([]byte, 48), msg); !isErr(r, yubihsm.CodeInsufficientPermissions) {
		t.Errorf("verify with a key without verify-hmac: %x", r)
	}
	// RFC 4231 test case 1 again, on SHA-384, with a key put.
	h.do(CmdPutHMACKey, append(keyTemplate(11, "384", 1, caps, AlgHMACSHA384), key...))
	var sum hash.Hash = hmac.New(sha512.New384, key)
	sum.Write(msg)
	if r := h.do(CmdSignHMAC, append([]byte{0, 11}, msg...)); !bytes.Equal(r[3:], sum.Sum(nil)) {
		t.Errorf("HMAC-SHA384: %x", r)
	}
}

// TestDeriveECDHRefusals: a point off the curve, one of the wrong length,
// a key without derive-ecdh and an Ed25519 key are refused.
func TestDeriveECDHRefusals(t *testing.T) {
	d := New(Config{})
	h, bad := newHost(t, d, 1, "password")
	if h == nil {
		t.Fatalf("session: %x", bad)
	}
	h.do(CmdGenerateAsymKey, keyTemplate(1, "p", 1, CapDeriveECDH, AlgP256))
	h.do(CmdGenerateAsymKey, keyTemplate(2, "k1", 1, CapDeriveECDH, AlgSecp256k1))
	h.do(CmdGenerateAsymKey, keyTemplate(3, "sign", 1, CapSignECDSA, AlgP256))
	h.do(CmdGenerateAsymKey, keyTemplate(4, "ed", 1, CapDeriveECDH, AlgEd25519))
	off := append([]byte{4}, bytes.Repeat([]byte{1}, 64)...)
	for _, tc := range []struct {
		name string
		p    []byte
		code yubihsm.ErrorCode
	}{
		{"P-256 point off the curve", append([]byte{0, 1}, off...), yubihsm.CodeInvalidData},
		{"secp256k1 point off the curve", append([]byte{0, 2}, off...), yubihsm.CodeInvalidData},
		{"a compressed point", append([]byte{0, 1, 2}, make([]byte, 32)...), yubihsm.CodeWrongLength},
		{"no derive-ecdh", append([]byte{0, 3}, off...), yubihsm.CodeInsufficientPermissions},
		{"Ed25519", append([]byte{0, 4}, off...), yubihsm.CodeInvalidCommand},
		{"short", []byte{0}, yubihsm.CodeWrongLength},
	} {
		if r := h.do(CmdDeriveECDH, tc.p); !isErr(r, tc.code) {
			t.Errorf("%s: %x, want %v", tc.name, r, tc.code)
		}
	}
}

// FuzzHMACECDH feeds arbitrary payloads to Put and Generate HMAC Key,
// Sign and Verify HMAC, Derive ECDH and Reset Device on a device holding
// an HMAC key and P-256 and secp256k1 ECDH keys: an error frame or the
// command's own answer, never a panic; a reset leaves the factory key.
func FuzzHMACECDH(f *testing.F) {
	f.Add(byte(0), append(keyTemplate(5, "h", 1, CapSignHMAC, AlgHMACSHA1), 1, 2, 3))
	f.Add(byte(1), keyTemplate(0, "g", 1, CapSignHMAC, AlgHMACSHA512))
	f.Add(byte(2), []byte{0, 1, 'm'})
	f.Add(byte(3), append([]byte{0, 1}, make([]byte, 33)...))
	f.Add(byte(4), append([]byte{0, 2, 4}, make([]byte, 64)...))
	f.Add(byte(5), []byte{})
	f.Fuzz(func(t *testing.T, cmd byte, p []byte) {
		d := New(Config{Rand: bytes.NewReader(bytes.Repeat([]byte{9}, 1<<12))})
		s := &session{auth: d.objects[objKey{TypeAuthKey, 1}]}
		if r := d.putHMACKey(s, CmdPutHMACKey, append(keyTemplate(1, "h", 1, CapSignHMAC|CapVerifyHMAC, AlgHMACSHA256), 7)); r[0] != CmdPutHMACKey|0x80 {
			t.Fatalf("put: %x", r)
		}
		for id, alg := range map[uint16]byte{2: AlgP256, 3: AlgSecp256k1} {
			if r := d.storeKey(s, CmdGenerateAsymKey, keyTemplate(id, "e", 1, CapDeriveECDH, alg)); r[0] != CmdGenerateAsymKey|0x80 {
				t.Fatalf("generate: %x", r)
			}
		}
		var resp []byte
		switch cmd % 6 {
		case 0:
			resp = d.putHMACKey(s, CmdPutHMACKey, p)
		case 1:
			resp = d.putHMACKey(s, CmdGenerateHMACKey, p)
		case 2:
			resp, _ = d.signHMAC(s, CmdSignHMAC, p)
		case 3:
			resp, _ = d.signHMAC(s, CmdVerifyHMAC, p)
		case 4:
			resp = d.deriveECDH(s, p)
		default:
			resp = d.resetDevice(s, p)
			if d.resetting {
				d.factoryReset()
				if len(d.objects) != 1 {
					t.Fatalf("%d objects after a reset", len(d.objects))
				}
			}
		}
		if len(resp) < 3 || (resp[0] != CmdError && resp[0]&0x80 == 0) {
			t.Fatalf("response %x", resp)
		}
	})
}
