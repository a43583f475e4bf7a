package yubihsmsim

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"testing"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	k1ecdsa "github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"

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
	h.do(CmdGenerateAsymKey, keyTemplate(6, "bad cert", 1, CapSignAttestationCertificate, AlgP256))
	h.do(CmdPutOpaque, append(keyTemplate(6, "cert", 1, 0, AlgOpaqueX509), 0x30, 0))
	for _, tc := range []struct {
		name string
		resp []byte
		code yubihsm.ErrorCode
	}{
		{"short", h.do(CmdSignAttestationCertificate, []byte{0, 1, 0}), yubihsm.CodeWrongLength},
		{"no key", h.do(CmdSignAttestationCertificate, []byte{0, 9, 0, 0}), yubihsm.CodeObjectNotFound},
		{"session without the capability", other.do(CmdSignAttestationCertificate, []byte{0, 1, 0, 0}), yubihsm.CodeInsufficientPermissions},
		{"attestation key without it", h.do(CmdSignAttestationCertificate, []byte{0, 1, 0, 3}), yubihsm.CodeInsufficientPermissions},
		{"attestation key without a certificate", h.do(CmdSignAttestationCertificate, []byte{0, 1, 0, 4}), yubihsm.CodeObjectNotFound},
		{"a template that is no certificate", h.do(CmdSignAttestationCertificate, []byte{0, 1, 0, 6}), yubihsm.CodeInvalidData},
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

// TestAttestSecp256k1: a secp256k1 key is attested with its public key in
// an RFC 5480 SubjectPublicKeyInfo (which crypto/x509 will not parse, so
// the certificate is taken apart by hand here), and a secp256k1 key
// attests, its ECDSA-SHA256 signature checked with decred's secp256k1.
func TestAttestSecp256k1(t *testing.T) {
	d := New(Config{})
	h, bad := newHost(t, d, 1, "password")
	if h == nil {
		t.Fatalf("session: %x", bad)
	}
	h.do(CmdGenerateAsymKey, keyTemplate(2, "k1", 1, CapSignECDSA, AlgSecp256k1))
	h.do(CmdGenerateAsymKey, keyTemplate(3, "ed", 1, CapSignEdDSA, AlgEd25519))
	h.do(CmdGenerateAsymKey, keyTemplate(5, "k1 attester", 1, CapSignAttestationCertificate, AlgSecp256k1))
	h.do(CmdPutOpaque, append(keyTemplate(5, "cert", 1, 0, AlgOpaqueX509), d.mustAttestation(t).cert.Raw...))
	k1pub, _ := secp256k1.ParsePubKey(append([]byte{4}, h.do(CmdGetPublicKey, []byte{0, 2})[4:]...))
	attester, _ := secp256k1.ParsePubKey(append([]byte{4}, h.do(CmdGetPublicKey, []byte{0, 5})[4:]...))

	r := h.do(CmdSignAttestationCertificate, []byte{0, 2, 0, 0})
	tbs, sig := splitCert(t, r)
	var spki struct {
		Algorithm struct {
			Algorithm  asn1.ObjectIdentifier
			Parameters asn1.ObjectIdentifier
		}
		PublicKey asn1.BitString
	}
	found := false
	for _, e := range mustSequence(t, tbs) {
		if _, err := asn1.Unmarshal(e, &spki); err == nil && spki.Algorithm.Parameters.Equal(asn1.ObjectIdentifier{1, 3, 132, 0, 10}) {
			got, err := secp256k1.ParsePubKey(spki.PublicKey.Bytes)
			found = err == nil && got.IsEqual(k1pub)
		}
	}
	if !found {
		t.Fatal("no secp256k1 SubjectPublicKeyInfo with the key's point")
	}
	digest := sha256.Sum256(tbs)
	if !ecdsa.VerifyASN1(&d.mustAttestation(t).key.PublicKey, digest[:], sig) {
		t.Fatal("the device key's signature does not verify")
	}

	r = h.do(CmdSignAttestationCertificate, []byte{0, 3, 0, 5})
	tbs, sig = splitCert(t, r)
	c, err := x509.ParseCertificate(r[3:])
	if err != nil || c.Issuer.String() != d.mustAttestation(t).cert.Subject.String() {
		t.Fatalf("attested by a secp256k1 key: %v, issuer %v", err, c.Issuer)
	}
	digest = sha256.Sum256(tbs)
	parsed, err := k1ecdsa.ParseDERSignature(sig)
	if err != nil || !parsed.Verify(digest[:], attester) {
		t.Fatalf("the secp256k1 attester's signature does not verify: %v", err)
	}
}

func mustSequence(t *testing.T, der []byte) [][]byte {
	t.Helper()
	var seq asn1.RawValue
	if _, err := asn1.Unmarshal(der, &seq); err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for b := seq.Bytes; len(b) > 0; {
		var v asn1.RawValue
		rest, err := asn1.Unmarshal(b, &v)
		if err != nil {
			t.Fatal(err)
		}
		out, b = append(out, v.FullBytes), rest
	}
	return out
}

// splitCert takes an attestation answer apart: the to-be-signed part and
// the signature.
func splitCert(t *testing.T, resp []byte) (tbs, sig []byte) {
	t.Helper()
	if resp[0] != CmdSignAttestationCertificate|0x80 {
		t.Fatalf("attest: %x", resp)
	}
	parts := mustSequence(t, resp[3:])
	var bits asn1.BitString
	if len(parts) != 3 {
		t.Fatalf("%d parts", len(parts))
	}
	if _, err := asn1.Unmarshal(parts[2], &bits); err != nil {
		t.Fatal(err)
	}
	return parts[0], bits.Bytes
}
