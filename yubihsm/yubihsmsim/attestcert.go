package yubihsmsim

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"io"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"

	"github.com/signerkit/signerkit/internal/secp256k1sign"
)

// Attestation certificates for secp256k1 keys, which crypto/x509 neither
// encodes nor signs with: the sim has crypto/x509 build the certificate
// around a stand-in P-256 key, then puts the secp256k1 key's
// SubjectPublicKeyInfo (RFC 5480, curve 1.3.132.0.10) in its place and
// signs the to-be-signed part again with the real key.

var (
	oidECPublicKey = asn1.ObjectIdentifier{1, 2, 840, 10045, 2, 1}
	oidSecp256k1   = asn1.ObjectIdentifier{1, 3, 132, 0, 10}
)

// k1Signer is a secp256k1 key as a crypto.Signer over a digest: DER.
type k1Signer struct{ k *secp256k1.PrivateKey }

func (s k1Signer) Public() crypto.PublicKey { return s.k.PubKey().ToECDSA() }

func (s k1Signer) Sign(_ io.Reader, digest []byte, _ crypto.SignerOpts) ([]byte, error) {
	return secp256k1sign.SignASN1(s.k, digest), nil
}

// k1SPKI is a secp256k1 key's SubjectPublicKeyInfo.
func k1SPKI(k *secp256k1.PublicKey) []byte {
	params, _ := asn1.Marshal(oidSecp256k1)
	der, _ := asn1.Marshal(struct {
		Algorithm pkix.AlgorithmIdentifier
		PublicKey asn1.BitString
	}{
		pkix.AlgorithmIdentifier{Algorithm: oidECPublicKey, Parameters: asn1.RawValue{FullBytes: params}},
		asn1.BitString{Bytes: k.SerializeUncompressed(), BitLength: 8 * 65},
	})
	return der
}

// sequence splits a DER SEQUENCE into its elements' encodings.
func sequence(der []byte) ([][]byte, error) {
	var seq asn1.RawValue
	if rest, err := asn1.Unmarshal(der, &seq); err != nil || len(rest) != 0 || seq.Tag != asn1.TagSequence {
		return nil, errors.New("yubihsmsim: not a DER SEQUENCE")
	}
	var out [][]byte
	for b := seq.Bytes; len(b) > 0; {
		var v asn1.RawValue
		rest, err := asn1.Unmarshal(b, &v)
		if err != nil {
			return nil, err
		}
		out = append(out, v.FullBytes)
		b = rest
	}
	return out, nil
}

// joinSequence is the DER SEQUENCE of the given encodings.
func joinSequence(elems ...[]byte) []byte {
	var body []byte
	for _, e := range elems {
		body = append(body, e...)
	}
	der, _ := asn1.Marshal(asn1.RawValue{Class: asn1.ClassUniversal, Tag: asn1.TagSequence, IsCompound: true, Bytes: body})
	return der
}

// certSubject returns the raw subject of a DER certificate, whatever its
// key (crypto/x509 refuses to parse a secp256k1 one).
func certSubject(der []byte) ([]byte, error) {
	cert, err := sequence(der)
	if err != nil || len(cert) != 3 {
		return nil, errors.New("yubihsmsim: not a certificate")
	}
	tbs, err := sequence(cert[0])
	if err != nil || len(tbs) < 6 {
		return nil, errors.New("yubihsmsim: not a certificate")
	}
	i := 4 // serial, signature, issuer, validity, subject
	if tbs[0][0] == 0xa0 {
		i = 5 // after the explicit version
	}
	return tbs[i], nil
}

// createCertificate is x509.CreateCertificate for a subject key given as
// pub, or as spki when crypto/x509 cannot encode it (pub nil), signed by
// signer, which may be a k1Signer.
func createCertificate(r io.Reader, tmpl, parent *x509.Certificate, pub crypto.PublicKey, spki []byte, signer crypto.Signer) ([]byte, error) {
	_, k1 := signer.(k1Signer)
	if pub != nil && !k1 {
		return x509.CreateCertificate(r, tmpl, parent, pub, signer)
	}
	stand, err := ecdsa.GenerateKey(elliptic.P256(), r)
	if err != nil {
		return nil, err
	}
	if pub == nil {
		pub = &stand.PublicKey
	}
	first := signer
	p := *parent
	if k1 {
		first, p.PublicKey = stand, &stand.PublicKey
	}
	der, err := x509.CreateCertificate(r, tmpl, &p, pub, first)
	if err != nil {
		return nil, err
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	tbs := c.RawTBSCertificate
	if spki != nil {
		elems, err := sequence(tbs)
		if err != nil {
			return nil, err
		}
		for i, e := range elems {
			if string(e) == string(c.RawSubjectPublicKeyInfo) {
				elems[i] = spki
			}
		}
		tbs = joinSequence(elems...)
	}
	return resign(r, der, tbs, c.SignatureAlgorithm, signer)
}

// resign signs tbs with signer under alg and assembles the certificate,
// keeping der's signature algorithm identifier.
func resign(r io.Reader, der, tbs []byte, alg x509.SignatureAlgorithm, signer crypto.Signer) ([]byte, error) {
	var h crypto.Hash
	switch alg {
	case x509.ECDSAWithSHA256, x509.SHA256WithRSA:
		h = crypto.SHA256
	case x509.ECDSAWithSHA384, x509.SHA384WithRSA:
		h = crypto.SHA384
	case x509.ECDSAWithSHA512, x509.SHA512WithRSA:
		h = crypto.SHA512
	case x509.PureEd25519:
	default:
		return nil, errors.New("yubihsmsim: unexpected signature algorithm")
	}
	digest := tbs
	if h != 0 {
		d := h.New()
		d.Write(tbs)
		digest = d.Sum(nil)
	}
	sig, err := signer.Sign(r, digest, h)
	if err != nil {
		return nil, err
	}
	cert, err := sequence(der)
	if err != nil {
		return nil, err
	}
	bits, _ := asn1.Marshal(asn1.BitString{Bytes: sig, BitLength: 8 * len(sig)})
	return joinSequence(tbs, cert[1], bits), nil
}
