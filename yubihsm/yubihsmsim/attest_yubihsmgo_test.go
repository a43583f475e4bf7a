package yubihsmsim_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/binary"
	"math/big"
	"testing"
	"time"

	"github.com/certusone/yubihsm-go/commands"

	"github.com/signerkit/signerkit/yubihsm/yubihsmsim"
)

// TestYubihsmGoAttestation: through yubihsm-go, the device's attestation
// certificate (Get Opaque 0) is a CA certificate, and the certificates
// Sign Attestation Certificate makes for Ed25519, P-384 and RSA keys carry
// each key's public key and Yubico's extensions, and verify under it
// (crypto/x509); a key of one's own attests with the issuer taken from its
// certificate object; secp256k1 keys get INVALID DATA.
func TestYubihsmGoAttestation(t *testing.T) {
	send := goSession(t)
	dev := send(commands.CreateGetOpaqueCommand(0)).(*commands.GetOpaqueResponse)
	ca, err := x509.ParseCertificate(dev.Data)
	if err != nil || !ca.IsCA {
		t.Fatalf("device certificate: %v", err)
	}
	caps := commands.CapabilityAsymmetricSignEcdsa | commands.CapabilityExportableUnderWrap
	send(commands.CreateGenerateAsymmetricKeyCommand(0x0e01, []byte("ed"), 3, commands.CapabilityAsymmetricSignEddsa, commands.AlgorithmED25519))
	send(commands.CreateGenerateAsymmetricKeyCommand(0x0e02, []byte("p384 key"), 1, caps, commands.AlgorithmP384))
	k := yubihsmsim.RSATestKey(t, 2048)
	send(commands.CreatePutAsymmetricKeyCommand(0x0e03, []byte("rsa"), 1, commands.CapabilityAsymmetricSignPkcs, commands.AlgorithmRSA2048,
		k.Primes[0].FillBytes(make([]byte, 128)), k.Primes[1].FillBytes(make([]byte, 128))))
	for _, id := range []uint16{0x0e01, 0x0e02, 0x0e03} {
		der := send(commands.CreateSignAttestationCertCommand(id, 0)).(*commands.SignAttestationCertResponse).Cert
		c, err := x509.ParseCertificate(der)
		if err != nil {
			t.Fatalf("%04x: %v", id, err)
		}
		if err := c.CheckSignatureFrom(ca); err != nil {
			t.Fatalf("%04x: not signed by the device key: %v", id, err)
		}
		pk := send(commands.CreateGetPubKeyCommand(id)).(*commands.GetPubKeyResponse)
		checkAttestedKey(t, c, pk)
		ext := map[string][]byte{}
		for _, e := range c.Extensions {
			ext[e.Id.String()] = e.Value
		}
		var gotID, serial int64
		var label string
		if _, err := asn1.Unmarshal(ext["1.3.6.1.4.1.41482.4.6"], &gotID); err != nil || gotID != int64(id) {
			t.Errorf("%04x: object id extension %d (%v)", id, gotID, err)
		}
		if _, err := asn1.Unmarshal(ext["1.3.6.1.4.1.41482.4.2"], &serial); err != nil || serial != 12345678 {
			t.Errorf("%04x: serial extension %d (%v)", id, serial, err)
		}
		if _, err := asn1.UnmarshalWithParams(ext["1.3.6.1.4.1.41482.4.9"], &label, "utf8"); err != nil || label == "" {
			t.Errorf("%04x: label extension %q (%v)", id, label, err)
		}
		if id == 0x0e02 {
			// The capabilities as python-yubihsm reads them: the BIT
			// STRING's content as a big-endian integer.
			var bits asn1.BitString
			asn1.Unmarshal(ext["1.3.6.1.4.1.41482.4.5"], &bits)
			if bits.BitLength != 64 || binary.BigEndian.Uint64(bits.Bytes) != caps {
				t.Errorf("capabilities extension %x, want %016x", bits.Bytes, caps)
			}
		}
	}

	// A key of one's own as attestation key, with its certificate.
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	d, _ := other.Bytes()
	send(commands.CreatePutAsymmetricKeyCommand(0x0e10, []byte("attester"), 1, 0x0000000400000000, commands.AlgorithmP256, d, nil))
	name := pkix.Name{CommonName: "Example attestation CA"}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: name, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	tc, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &other.PublicKey, other)
	if err != nil {
		t.Fatal(err)
	}
	send(commands.CreatePutOpaqueCommand(0x0e10, []byte("attester cert"), 1, 0, commands.AlgorithmOpaqueX509Certificate, tc))
	der := send(commands.CreateSignAttestationCertCommand(0x0e01, 0x0e10)).(*commands.SignAttestationCertResponse).Cert
	c, err := x509.ParseCertificate(der)
	if err != nil || c.Issuer.CommonName != name.CommonName {
		t.Fatalf("attested by 0e10: issuer %v (%v)", c.Issuer, err)
	}
	parent, _ := x509.ParseCertificate(tc)
	if err := c.CheckSignatureFrom(parent); err != nil {
		t.Fatalf("not signed by key 0e10: %v", err)
	}
}

func checkAttestedKey(t *testing.T, c *x509.Certificate, pk *commands.GetPubKeyResponse) {
	t.Helper()
	switch p := c.PublicKey.(type) {
	case ed25519.PublicKey:
		if !bytes.Equal(p, pk.KeyData) {
			t.Fatal("Ed25519 key differs")
		}
	case *ecdsa.PublicKey:
		b, _ := p.Bytes()
		if !bytes.Equal(b[1:], pk.KeyData) {
			t.Fatal("EC key differs")
		}
	case *rsa.PublicKey:
		if p.N.Cmp(new(big.Int).SetBytes(pk.KeyData)) != 0 {
			t.Fatal("RSA key differs")
		}
	default:
		t.Fatalf("%T", p)
	}
}
