package threshold

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"path/filepath"
	"time"

	"github.com/signerkit/signerkit/internal/atomicfile"
)

// IssuedCert is one certificate WriteCerts wrote.
type IssuedCert struct {
	Name     string // party-<id> or coordinator-<n>, its DNS name
	CertFile string
	KeyFile  string
	Pin      string // its SPKI pin, sha256:<hex>
}

// WriteCerts makes the certificates of a threshold key's processes in dir:
// a CA (ca.crt, ca.key), and for each of the parties and coordinators a
// certificate and key (party-<i>.crt/.key, i from 1; coordinator-<j>.crt/
// .key, j from 1), all ECDSA P-256, every file mode 0600 and none
// overwritten. A party's certificate, for the DNS name party-<i>, is good
// for both ends of a connection, so that the parties can run the network
// key generation (RunDKG) among themselves with it; being good for server
// authentication, it is never admitted by name as a coordinator's. A
// coordinator's is for client authentication only, for coordinator-<j>,
// so it is never taken for a party's. They are valid for validity (0 means ten years). The CA's key
// is needed only to issue more: keep it offline.
func WriteCerts(dir string, parties, coordinators int, validity time.Duration) (ca IssuedCert, issued []IssuedCert, err error) {
	if parties < 1 || coordinators < 1 || parties > 255 || coordinators > 255 {
		return IssuedCert{}, nil, fmt.Errorf("threshold: %d parties and %d coordinators: want 1 to 255 of each", parties, coordinators)
	}
	if validity <= 0 {
		validity = 10 * 365 * 24 * time.Hour
	}
	now := time.Now().Add(-time.Hour)
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return IssuedCert{}, nil, err
	}
	caTmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: "signerkit threshold CA"},
		NotBefore: now, NotAfter: now.Add(validity), IsCA: true, BasicConstraintsValid: true, MaxPathLenZero: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return IssuedCert{}, nil, err
	}
	caCert, _ := x509.ParseCertificate(caDER)
	if ca, err = writePair(dir, "ca", caDER, caKey); err != nil {
		return IssuedCert{}, nil, err
	}
	issue := func(name string, usage ...x509.ExtKeyUsage) error {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		tmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
			NotBefore: now, NotAfter: now.Add(validity), KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: usage}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		if err != nil {
			return err
		}
		c, err := writePair(dir, name, der, key)
		issued = append(issued, c)
		return err
	}
	for i := 1; i <= parties; i++ {
		if err := issue(fmt.Sprintf("party-%d", i), x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth); err != nil {
			return ca, issued, err
		}
	}
	for j := 1; j <= coordinators; j++ {
		if err := issue(fmt.Sprintf("coordinator-%d", j), x509.ExtKeyUsageClientAuth); err != nil {
			return ca, issued, err
		}
	}
	return ca, issued, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n.Add(n, big.NewInt(1))
}

// writePair writes name.crt and name.key in dir, mode 0600, refusing to
// overwrite either.
func writePair(dir, name string, der []byte, key *ecdsa.PrivateKey) (IssuedCert, error) {
	cert, _ := x509.ParseCertificate(der)
	c := IssuedCert{Name: name, CertFile: filepath.Join(dir, name+".crt"), KeyFile: filepath.Join(dir, name+".key"), Pin: SPKIHash(cert)}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return c, err
	}
	defer clear(kder)
	kpem := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})
	defer clear(kpem)
	if err := atomicfile.CreateFile(c.KeyFile, kpem, atomicfile.Options{}); err != nil {
		return c, fmt.Errorf("threshold: %w", err)
	}
	if err := atomicfile.CreateFile(c.CertFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), atomicfile.Options{}); err != nil {
		return c, fmt.Errorf("threshold: %w", err)
	}
	return c, nil
}
