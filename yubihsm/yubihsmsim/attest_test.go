package yubihsmsim

import (
	"bytes"
	"crypto/x509"
	"testing"

	"github.com/signerkit/signerkit/yubihsm"
)

// TestAttestationRefusals: each refusal of Sign Attestation Certificate,
// and the device key surviving Reset Device.
func TestAttestationRefusals(t *testing.T) {
	d := New(Config{})
	d.AddAuthKey(2, "no attest", []byte("pw2"), CapAll&^CapSignAttestationCertificate, CapAll, 0xffff)
	h, bad := newHost(t, d, 1, "password")
	if h == nil {
		t.Fatalf("session: %x", bad)
	}
	other, _ := newHost(t, d, 2, "pw2")
	h.do(CmdGenerateAsymKey, keyTemplate(1, "ed", 1, CapSignEdDSA, AlgEd25519))
	h.do(CmdGenerateAsymKey, keyTemplate(2, "k1", 1, CapSignECDSA, AlgSecp256k1))
	h.do(CmdGenerateAsymKey, keyTemplate(3, "no cap", 1, CapSignECDSA, AlgP256))
	h.do(CmdGenerateAsymKey, keyTemplate(4, "no cert", 1, CapSignAttestationCertificate, AlgP256))
	h.do(CmdGenerateAsymKey, keyTemplate(5, "k1 attester", 1, CapSignAttestationCertificate, AlgSecp256k1))
	h.do(CmdPutOpaque, append(keyTemplate(5, "cert", 1, 0, AlgOpaqueX509), d.mustAttestation(t).cert.Raw...))
	for _, tc := range []struct {
		name string
		resp []byte
		code yubihsm.ErrorCode
	}{
		{"short", h.do(CmdSignAttestationCertificate, []byte{0, 1, 0}), yubihsm.CodeWrongLength},
		{"no key", h.do(CmdSignAttestationCertificate, []byte{0, 9, 0, 0}), yubihsm.CodeObjectNotFound},
		{"secp256k1 attested", h.do(CmdSignAttestationCertificate, []byte{0, 2, 0, 0}), yubihsm.CodeInvalidData},
		{"session without the capability", other.do(CmdSignAttestationCertificate, []byte{0, 1, 0, 0}), yubihsm.CodeInsufficientPermissions},
		{"attestation key without it", h.do(CmdSignAttestationCertificate, []byte{0, 1, 0, 3}), yubihsm.CodeInsufficientPermissions},
		{"attestation key without a certificate", h.do(CmdSignAttestationCertificate, []byte{0, 1, 0, 4}), yubihsm.CodeObjectNotFound},
		{"secp256k1 attestation key", h.do(CmdSignAttestationCertificate, []byte{0, 1, 0, 5}), yubihsm.CodeInvalidData},
	} {
		if !isErr(tc.resp, tc.code) {
			t.Errorf("%s: %x, want %v", tc.name, tc.resp, tc.code)
		}
	}
	before := h.do(CmdGetOpaque, []byte{0, 0})
	h.do(CmdResetDevice, nil)
	h, _ = newHost(t, d, 1, "password")
	if after := h.do(CmdGetOpaque, []byte{0, 0}); !bytes.Equal(before, after) || before[0] != CmdGetOpaque|0x80 {
		t.Error("the device's attestation certificate changed with Reset Device")
	}
}

func (d *Device) mustAttestation(t *testing.T) *attestation {
	t.Helper()
	a, err := d.deviceAttestation()
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// FuzzAttest feeds arbitrary payloads to Sign Attestation Certificate on
// a device with an Ed25519 key and an attestation key with its
// certificate: an error frame or a certificate that parses.
func FuzzAttest(f *testing.F) {
	f.Add([]byte{0, 1, 0, 0})
	f.Add([]byte{0, 1, 0, 2})
	f.Add([]byte{0, 2, 0, 2})
	f.Fuzz(func(t *testing.T, p []byte) {
		d := New(Config{Rand: bytes.NewReader(bytes.Repeat([]byte{9}, 1<<12))})
		s := &session{auth: d.objects[objKey{TypeAuthKey, 1}]}
		d.storeKey(s, CmdGenerateAsymKey, keyTemplate(1, "ed", 1, CapSignEdDSA, AlgEd25519))
		d.storeKey(s, CmdGenerateAsymKey, keyTemplate(2, "a", 1, CapSignAttestationCertificate, AlgP256))
		d.putOpaque(s, append(keyTemplate(2, "c", 1, 0, AlgOpaqueX509), d.mustAttestation(t).cert.Raw...))
		resp := d.attestKey(s, p)
		if resp[0] == CmdError {
			return
		}
		if _, err := x509.ParseCertificate(resp[3:]); err != nil {
			t.Fatalf("certificate %x: %v", resp, err)
		}
	})
}
