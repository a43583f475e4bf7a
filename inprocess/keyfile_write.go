package inprocess

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"

	"github.com/signerkit/signerkit/internal/atomicfile"
	"github.com/signerkit/signerkit/internal/eckey"
	"github.com/signerkit/signerkit/signer"
)

// MarshalKeyFile returns priv as a PEM key file that ParseKeyFile reads:
// PKCS #8 ("PRIVATE KEY") for Ed25519, P-256, P-384 and RSA keys, and SEC
// 1 ("EC PRIVATE KEY", with the public key) for secp256k1 keys, the form
// OpenSSL writes for them. priv is an ed25519.PrivateKey, an
// *ecdsa.PrivateKey or an *rsa.PrivateKey of 2048 to 8192 bits, checked as
// FromPrivateKey checks it. The result holds the key in the clear: write
// it with WriteKeyFile, or to a file only its owner can read.
func MarshalKeyFile(priv crypto.PrivateKey) ([]byte, error) {
	alg := signer.Algorithm(0)
	if _, ok := priv.(*rsa.PrivateKey); ok {
		alg = signer.RSAPKCS1v15
	}
	k, err := FromPrivateKey(priv, alg) // checks the key
	if err != nil {
		return nil, err
	}
	defer k.Close()
	var der []byte
	typ := "PRIVATE KEY"
	switch {
	case k.k1 != nil:
		typ = "EC PRIVATE KEY"
		d := k.k1.Key.Bytes()
		pub := k.pub.(*ecdsa.PublicKey)
		x, y := eckey.Coordinates(pub)
		point := append([]byte{4}, append(x.FillBytes(make([]byte, 32)), y.FillBytes(make([]byte, 32))...)...)
		der, err = asn1.Marshal(ecPrivateKey{Version: 1, PrivateKey: d[:], NamedCurveOID: oidSecp256k1, PublicKey: asn1.BitString{Bytes: point, BitLength: 8 * len(point)}})
		clear(d[:])
	case k.ed != nil:
		// PKCS #8 (RFC 8410) by hand: x509.MarshalPKCS8PrivateKey leaves
		// copies of the seed in buffers it does not wipe.
		der = k.ed.AppendSeed(append(make([]byte, 0, len(pkcs8Ed25519Prefix)+ed25519.SeedSize), pkcs8Ed25519Prefix...))
	case k.ec != nil:
		der, err = x509.MarshalPKCS8PrivateKey(k.ec)
	default:
		der, err = x509.MarshalPKCS8PrivateKey(k.rsa)
	}
	if err != nil {
		return nil, fmt.Errorf("inprocess: %w", err)
	}
	defer clear(der)
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), nil
}

// WriteKeyFile writes priv (see MarshalKeyFile) to a new file at path,
// mode 0600, atomically and durably: the file appears whole or not at
// all, and once WriteKeyFile returns nil it survives a power cut. An
// existing file is left alone and the error wraps signer.ErrKeyExists.
func WriteKeyFile(path string, priv crypto.PrivateKey) error {
	data, err := MarshalKeyFile(priv)
	if err != nil {
		return err
	}
	defer clear(data)
	err = atomicfile.CreateFile(path, data, atomicfile.Options{})
	if errors.Is(err, fs.ErrExist) {
		return &keyFileError{path: path, err: signer.ErrKeyExists}
	}
	if err != nil {
		return fmt.Errorf("inprocess: writing key file %s: %w", path, err)
	}
	return nil
}

// wipePrivate clears what it can of a private key that ParseKeyFile
// returned.
func wipePrivate(priv crypto.PrivateKey) {
	switch k := priv.(type) {
	case ed25519.PrivateKey:
		clear(k)
	case *ecdsa.PrivateKey:
		wipe(eckey.Scalar(k))
	case *rsa.PrivateKey:
		wipe(k.D)
		for _, p := range k.Primes {
			wipe(p)
		}
		wipe(k.Precomputed.Dp)
		wipe(k.Precomputed.Dq)
		wipe(k.Precomputed.Qinv)
	}
}

// pkcs8Ed25519Prefix is the DER of an Ed25519 PKCS #8 key (RFC 8410
// section 7) up to its 32-byte seed: SEQUENCE { INTEGER 0, SEQUENCE { OID
// 1.3.101.112 }, OCTET STRING { OCTET STRING (32 bytes) } }.
var pkcs8Ed25519Prefix = []byte{0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20}
