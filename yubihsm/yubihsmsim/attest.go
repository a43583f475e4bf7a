package yubihsmsim

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/binary"
	"fmt"
	"io"
	"math/big"
	"time"

	"github.com/signerkit/signerkit/yubihsm"
)

// Sign Attestation Certificate, after Yubico's command page and
// Attestation concept page, and python-yubihsm's AsymmetricKey.attest:
// the key's id (2) and the attestation key's id (2); the answer is a DER
// X.509 certificate for the key's public key, with Yubico's extensions
// (firmware, serial, origin, domains, capabilities, id, label), signed by
// the attestation key. Attestation key 0 is the device's own, whose
// certificate Get Opaque answers for object 0; another attestation key
// needs the sign-attestation-certificate capability and an X.509
// certificate object of its own id, whose subject becomes the issuer.
//
// The sim's device key is P-256, made when the Device is and kept over
// Reset Device, with a self-signed certificate naming the simulator: it
// chains to no Yubico CA. secp256k1 keys are attested and attest too
// (attestcert.go).

// Attestation command, capability and Yubico's extension OIDs.
const (
	CmdSignAttestationCertificate        = 0x64
	CapSignAttestationCertificate uint64 = 1 << 0x22
)

var (
	oidFirmware     = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 41482, 4, 1}
	oidSerial       = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 41482, 4, 2}
	oidOrigin       = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 41482, 4, 3}
	oidDomains      = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 41482, 4, 4}
	oidCapabilities = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 41482, 4, 5}
	oidObjectID     = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 41482, 4, 6}
	oidLabel        = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 41482, 4, 9}
)

// attestation is the device's attestation key and its certificate.
type attestation struct {
	key  *ecdsa.PrivateKey
	cert *x509.Certificate
}

// newAttestation makes the device's attestation key and certificate.
func newAttestation(r io.Reader, serial uint32, now time.Time) (*attestation, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), r)
	if err != nil {
		return nil, err
	}
	name := pkix.Name{CommonName: fmt.Sprintf("Simulated YubiHSM Attestation (%d)", serial)}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(int64(serial)), Subject: name, Issuer: name,
		NotBefore: now.Add(-time.Hour).UTC(), NotAfter: time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(r, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		return nil, err
	}
	c, err := x509.ParseCertificate(der)
	return &attestation{key: k, cert: c}, err
}

// edSigner is an edKey as a crypto.Signer, for crypto/x509.
type edSigner struct{ k *edKey }

func (s edSigner) Public() crypto.PublicKey { return ed25519.PublicKey(s.k.public()) }

func (s edSigner) Sign(_ io.Reader, msg []byte, opts crypto.SignerOpts) ([]byte, error) {
	if opts.HashFunc() != 0 {
		return nil, fmt.Errorf("yubihsmsim: Ed25519 signs the message itself")
	}
	return s.k.sign(msg), nil
}

// asymKeys returns an asymmetric object's public key (nil for secp256k1,
// which crypto/x509 cannot encode: then its SubjectPublicKeyInfo) and its
// signer.
func asymKeys(o *object) (crypto.PublicKey, []byte, crypto.Signer) {
	switch {
	case o.ed != nil:
		return ed25519.PublicKey(o.ed.public()), nil, edSigner{o.ed}
	case o.ec != nil:
		return &o.ec.PublicKey, nil, o.ec
	case o.rsa != nil:
		return &o.rsa.PublicKey, nil, o.rsa
	}
	return nil, k1SPKI(o.k1.PubKey()), k1Signer{o.k1}
}

// bitString is v as an ASN.1 BIT STRING of its n big-endian bytes, no
// unused bits: python-yubihsm's KeyAttestationExtensions reads the
// content after the tag and length as a big-endian integer.
func bitString(v uint64, n int) []byte {
	b := binary.BigEndian.AppendUint64(nil, v)[8-n:]
	der, _ := asn1.Marshal(asn1.BitString{Bytes: b, BitLength: 8 * n})
	return der
}

// attestExtensions are Yubico's extensions describing o.
func (d *Device) attestExtensions(o *object) []pkix.Extension {
	serial, _ := asn1.Marshal(int64(d.serial))
	fw, _ := asn1.Marshal([]byte{2, 4, 0})
	id, _ := asn1.Marshal(int64(o.id))
	label, _ := asn1.MarshalWithParams(string(trimLabel(o.label[:])), "utf8")
	return []pkix.Extension{
		{Id: oidFirmware, Value: fw},
		{Id: oidSerial, Value: serial},
		{Id: oidOrigin, Value: bitString(uint64(o.origin), 1)},
		{Id: oidDomains, Value: bitString(uint64(o.domains), 2)},
		{Id: oidCapabilities, Value: bitString(o.caps, 8)},
		{Id: oidObjectID, Value: id},
		{Id: oidLabel, Value: label},
	}
}

func trimLabel(l []byte) []byte {
	for i, c := range l {
		if c == 0 {
			return l[:i]
		}
	}
	return l
}

// attestKey answers Sign Attestation Certificate.
func (d *Device) attestKey(s *session, p []byte) []byte {
	if len(p) != 4 {
		return errFrame(yubihsm.CodeWrongLength)
	}
	o := d.objects[objKey{TypeAsymmetric, binary.BigEndian.Uint16(p)}]
	if o == nil || !visible(s, o) {
		return errFrame(yubihsm.CodeObjectNotFound)
	}
	if s.auth.caps&CapSignAttestationCertificate == 0 {
		return errFrame(yubihsm.CodeInsufficientPermissions)
	}
	parent, signer, code := d.attestationKey(s, binary.BigEndian.Uint16(p[2:]))
	if parent == nil {
		return errFrame(code)
	}
	pub, spki, _ := asymKeys(o)
	sn := make([]byte, 16)
	if _, err := io.ReadFull(d.rand, sn); err != nil {
		return errFrame(yubihsm.CodeInvalidData)
	}
	sn[0] &= 0x7f
	tmpl := &x509.Certificate{
		SerialNumber:    new(big.Int).SetBytes(sn),
		Subject:         pkix.Name{CommonName: fmt.Sprintf("YubiHSM Attestation id:0x%04x", o.id)},
		NotBefore:       d.clock.Now().Add(-time.Hour).UTC(),
		NotAfter:        time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		ExtraExtensions: d.attestExtensions(o),
	}
	der, err := createCertificate(d.rand, tmpl, parent, pub, spki, signer)
	if err != nil {
		return errFrame(yubihsm.CodeInvalidData)
	}
	return okFrame(CmdSignAttestationCertificate, der)
}

// attestationKey finds the attestation key id names and its certificate:
// 0 the device's, else an asymmetric key with the capability and an X.509
// certificate object of the same id.
func (d *Device) attestationKey(s *session, id uint16) (*x509.Certificate, crypto.Signer, yubihsm.ErrorCode) {
	if id == 0 {
		a, err := d.deviceAttestation()
		if err != nil {
			return nil, nil, yubihsm.CodeInvalidData
		}
		return a.cert, a.key, 0
	}
	ak := d.objects[objKey{TypeAsymmetric, id}]
	if ak == nil || !visible(s, ak) {
		return nil, nil, yubihsm.CodeObjectNotFound
	}
	if ak.caps&CapSignAttestationCertificate == 0 {
		return nil, nil, yubihsm.CodeInsufficientPermissions
	}
	tc := d.objects[objKey{TypeOpaque, id}]
	if tc == nil || tc.alg != AlgOpaqueX509 {
		return nil, nil, yubihsm.CodeObjectNotFound
	}
	// The certificate lends its subject as the issuer; its key should be
	// the attestation key's, and the sim does not insist.
	subject, err := certSubject(tc.data)
	if err != nil {
		return nil, nil, yubihsm.CodeInvalidData
	}
	_, _, signer := asymKeys(ak)
	return &x509.Certificate{RawSubject: subject, PublicKey: signer.Public()}, signer, 0
}

// deviceAttestation returns the device's attestation key, made on first
// use.
func (d *Device) deviceAttestation() (*attestation, error) {
	if d.attest == nil {
		a, err := newAttestation(d.rand, d.serial, d.clock.Now())
		if err != nil {
			return nil, err
		}
		d.attest = a
	}
	return d.attest, nil
}
