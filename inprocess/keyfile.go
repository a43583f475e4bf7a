package inprocess

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"fmt"
	"math/big"
	"strings"

	"github.com/signerkit/signerkit/internal/eckey"
	"github.com/signerkit/signerkit/internal/keyfile"
	"github.com/signerkit/signerkit/signer"
)

// maxKeyFile bounds what a key file may hold: an 8192-bit RSA key's PEM
// is under 7 KiB.
const maxKeyFile = 64 << 10

var (
	oidECPublicKey = asn1.ObjectIdentifier{1, 2, 840, 10045, 2, 1}
	oidP256        = asn1.ObjectIdentifier{1, 2, 840, 10045, 3, 1, 7}
	oidP384        = asn1.ObjectIdentifier{1, 3, 132, 0, 34}
	oidSecp256k1   = asn1.ObjectIdentifier{1, 3, 132, 0, 10}
	oidEd25519     = asn1.ObjectIdentifier{1, 3, 101, 112}
	oidRSA         = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 1}
)

// pkcs8 is RFC 5208's PrivateKeyInfo; attributes and RFC 5958's public
// key, which may follow, are not read.
type pkcs8 struct {
	Version    int
	Algo       pkix.AlgorithmIdentifier
	PrivateKey []byte
}

// ecPrivateKey is SEC 1's ECPrivateKey (RFC 5915).
type ecPrivateKey struct {
	Version       int
	PrivateKey    []byte
	NamedCurveOID asn1.ObjectIdentifier `asn1:"optional,explicit,tag:0"`
	PublicKey     asn1.BitString        `asn1:"optional,explicit,tag:1"`
}

// keyFileError says which key file an error is about.
type keyFileError struct {
	path string
	err  error
}

func (e *keyFileError) Error() string {
	where := "key file"
	if e.path != "" {
		where += " " + e.path
	}
	return "inprocess: " + where + ": " + strings.TrimPrefix(e.err.Error(), "inprocess: ")
}

func (e *keyFileError) Unwrap() error { return e.err }

// unprefixed is an error of this package told inside another's message:
// without its "inprocess: " prefix.
type unprefixed struct{ err error }

func (e unprefixed) Error() string { return strings.TrimPrefix(e.err.Error(), "inprocess: ") }
func (e unprefixed) Unwrap() error { return e.err }

// corrupt is an error, wrapping signer.ErrCorrupt, for a key file that is
// not in a form ParseKeyFile reads. Its text never quotes the file.
func corrupt(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), signer.ErrCorrupt)
}

// ParseKeyFile reads the private key in the contents of a key file, in one
// of these forms:
//
//   - PEM "PRIVATE KEY": PKCS #8 (RFC 5208) holding an Ed25519, ECDSA
//     (P-256, P-384 or secp256k1) or RSA key, as openssl genpkey writes it;
//   - PEM "EC PRIVATE KEY": SEC 1 (RFC 5915) on P-256, P-384 or secp256k1
//     (OID 1.3.132.0.10), as openssl ecparam -genkey writes it; an "EC
//     PARAMETERS" block beside it is skipped;
//   - PEM "RSA PRIVATE KEY": PKCS #1, as openssl genrsa once wrote it;
//   - a CometBFT or gno priv_validator_key.json, whose priv_key is
//     {"type":"tendermint/PrivKeyEd25519","value":…} (CometBFT) or
//     {"@type":"/tm.PrivKeyEd25519","value":…} (tm2's amino JSON), or the
//     PrivKeySecp256k1 of either. Its pub_key must be the private key's;
//     its address is not read.
//
// Other PEM blocks (certificates, public keys) are skipped, so a key may
// share its file with its certificate; more than one private key is an
// error. It returns an ed25519.PrivateKey, an *ecdsa.PrivateKey (on
// signer.Secp256k1() for secp256k1) or an *rsa.PrivateKey, which the
// caller should wipe once done with it.
//
// Data that is not a key file, or is damaged, gives an error wrapping
// signer.ErrCorrupt; key material that is inconsistent (a public key that
// is not the private key's, a scalar out of range) signer.ErrInvalidKey;
// encrypted keys and other curves and algorithms signer.ErrUnsupported.
// Errors never quote key material: at most a JSON key type or an OID.
func ParseKeyFile(data []byte) (crypto.PrivateKey, error) {
	priv, err := parseKeyFile(data)
	if err != nil {
		return nil, &keyFileError{err: err}
	}
	return priv, nil
}

// LoadKeyFile reads and parses the key file at path (see ParseKeyFile),
// and wipes what it read. A missing file gives an error wrapping
// signer.ErrKeyNotFound, and a path that is not a regular file (a
// directory, a pipe) one wrapping signer.ErrInvalidArgument. Nothing
// checks the file's mode: keep key files readable by their owner alone
// (0600), as WriteKeyFile writes them.
func LoadKeyFile(path string) (crypto.PrivateKey, error) {
	data, err := keyfile.Read(path, maxKeyFile)
	if err != nil {
		return nil, &keyFileError{path: path, err: err}
	}
	priv, err := parseKeyFile(data)
	clear(data)
	if err != nil {
		return nil, &keyFileError{path: path, err: err}
	}
	return priv, nil
}

func parseKeyFile(data []byte) (crypto.PrivateKey, error) {
	if len(data) > maxKeyFile {
		return nil, corrupt("more than %d bytes, larger than any key file", maxKeyFile)
	}
	if t := bytes.TrimLeft(data, " \t\r\n\ufeff"); len(t) > 0 && t[0] == '{' {
		return parseValidatorKey(t)
	}
	var found *pem.Block
	defer func() {
		if found != nil {
			clear(found.Bytes)
		}
	}()
	for rest := data; ; {
		b, r := pem.Decode(rest)
		if b == nil {
			break
		}
		rest = r
		switch b.Type {
		case "PRIVATE KEY", "EC PRIVATE KEY", "RSA PRIVATE KEY":
			if found != nil {
				clear(b.Bytes)
				return nil, corrupt("more than one private key")
			}
			found = b
		case "ENCRYPTED PRIVATE KEY":
			return nil, fmt.Errorf("encrypted keys are not supported (decrypt it with openssl pkcs8 first): %w", signer.ErrUnsupported)
		}
	}
	if found == nil {
		return nil, corrupt("no PEM private key block and not a priv_validator_key.json")
	}
	if len(found.Headers) != 0 {
		return nil, fmt.Errorf("PEM %s block with headers, as an encrypted key has: %w", found.Type, signer.ErrUnsupported)
	}
	switch found.Type {
	case "PRIVATE KEY":
		return parsePKCS8(found.Bytes)
	case "EC PRIVATE KEY":
		return parseSEC1(found.Bytes, nil)
	}
	k, err := x509.ParsePKCS1PrivateKey(found.Bytes)
	if err != nil {
		return nil, corrupt("malformed PKCS #1 RSA key")
	}
	return k, nil
}

func parsePKCS8(der []byte) (crypto.PrivateKey, error) {
	var p pkcs8
	if rest, err := asn1.Unmarshal(der, &p); err != nil || len(rest) != 0 {
		return nil, corrupt("malformed PKCS #8")
	}
	defer clear(p.PrivateKey)
	switch alg := p.Algo.Algorithm; {
	case alg.Equal(oidECPublicKey):
		var curve asn1.ObjectIdentifier
		if rest, err := asn1.Unmarshal(p.Algo.Parameters.FullBytes, &curve); err != nil || len(rest) != 0 {
			return nil, corrupt("PKCS #8 EC key without a named curve")
		}
		return parseSEC1(p.PrivateKey, curve)
	case alg.Equal(oidEd25519):
		// Read here rather than by x509.ParsePKCS8PrivateKey, which
		// expands the key with ed25519.NewKeyFromSeed and leaves copies.
		if len(p.Algo.Parameters.FullBytes) != 0 {
			return nil, corrupt("PKCS #8 Ed25519 key with algorithm parameters")
		}
		var seed []byte
		rest, err := asn1.Unmarshal(p.PrivateKey, &seed)
		defer clear(seed)
		if err != nil || len(rest) != 0 || len(seed) != ed25519.SeedSize {
			return nil, corrupt("malformed PKCS #8 Ed25519 key")
		}
		k, err := ed25519FromSeed(seed) // checks the derived public key too
		if err != nil {
			return nil, err
		}
		return k, nil
	case alg.Equal(oidRSA):
		k, err := x509.ParsePKCS8PrivateKey(der)
		if err != nil {
			return nil, corrupt("malformed PKCS #8 key")
		}
		return k, nil
	default:
		return nil, fmt.Errorf("PKCS #8 key of algorithm %v: %w", alg, signer.ErrUnsupported)
	}
}

// curveAlgorithm maps a named curve to its algorithm.
func curveAlgorithm(oid asn1.ObjectIdentifier) (signer.Algorithm, error) {
	switch {
	case oid.Equal(oidP256):
		return signer.ECDSAP256, nil
	case oid.Equal(oidP384):
		return signer.ECDSAP384, nil
	case oid.Equal(oidSecp256k1):
		return signer.ECDSASecp256k1, nil
	}
	return 0, fmt.Errorf("EC key on curve %v: only P-256, P-384 and secp256k1 are supported: %w", oid, signer.ErrUnsupported)
}

// parseSEC1 reads an ECPrivateKey on the curve it names or, when it names
// none, on outer, the curve of the PKCS #8 wrapping around it.
func parseSEC1(der []byte, outer asn1.ObjectIdentifier) (*ecdsa.PrivateKey, error) {
	var k ecPrivateKey
	if rest, err := asn1.Unmarshal(der, &k); err != nil || len(rest) != 0 {
		return nil, corrupt("malformed SEC 1 EC key")
	}
	defer clear(k.PrivateKey)
	if k.Version != 1 {
		return nil, corrupt("SEC 1 EC key of version %d, want 1", k.Version)
	}
	oid := k.NamedCurveOID
	switch {
	case len(oid) == 0 && len(outer) == 0:
		return nil, corrupt("EC key names no curve")
	case len(oid) == 0:
		oid = outer
	case len(outer) != 0 && !oid.Equal(outer):
		return nil, corrupt("EC key names two curves")
	}
	alg, err := curveAlgorithm(oid)
	if err != nil {
		return nil, err
	}
	// SEC 1 writes the scalar at the curve's size; some encoders dropped
	// leading zeros, or added some, as crypto/x509 also accepts.
	size := alg.Curve().Params().BitSize / 8
	d := bytes.TrimLeft(k.PrivateKey, "\x00")
	if len(d) > size {
		return nil, fmt.Errorf("%v private scalar longer than %d bytes: %w", alg, size, signer.ErrInvalidKey)
	}
	scalar := make([]byte, size)
	copy(scalar[size-len(d):], d)
	defer clear(scalar)
	priv, err := ecdsaFromScalar(scalar, alg)
	if err != nil {
		return nil, err
	}
	if k.PublicKey.BitLength != 0 {
		if k.PublicKey.BitLength%8 != 0 || !pointMatches(&priv.PublicKey, k.PublicKey.Bytes) {
			wipe(eckey.Scalar(priv))
			return nil, fmt.Errorf("the public key in the file is not the private key's: %w", signer.ErrInvalidKey)
		}
	}
	return priv, nil
}

// ecdsaFromScalar makes the ECDSA key of scalar d on alg's curve.
func ecdsaFromScalar(d []byte, alg signer.Algorithm) (*ecdsa.PrivateKey, error) {
	k, err := FromSeed(d, alg) // checks the range, derives the public key
	if err != nil {
		return nil, err
	}
	defer k.Close()
	pub := copyPublic(k.pub).(*ecdsa.PublicKey)
	return eckey.NewPrivate(pub, new(big.Int).SetBytes(d)), nil
}

// pointMatches reports whether enc is pub's point, uncompressed (04 ‖ X ‖
// Y) or compressed (02 or 03 ‖ X).
func pointMatches(pub *ecdsa.PublicKey, enc []byte) bool {
	size := (pub.Curve.Params().BitSize + 7) / 8
	px, py := eckey.Coordinates(pub)
	x := px.FillBytes(make([]byte, size))
	switch {
	case len(enc) == 1+2*size && enc[0] == 4:
		return bytes.Equal(enc[1:1+size], x) && bytes.Equal(enc[1+size:], py.FillBytes(make([]byte, size)))
	case len(enc) == 1+size && (enc[0] == 2 || enc[0] == 3):
		return bytes.Equal(enc[1:], x) && enc[0] == 2+byte(py.Bit(0))
	}
	return false
}
