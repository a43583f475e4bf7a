package threshold

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/signerkit/signerkit/internal/keyfile"
	"github.com/signerkit/signerkit/internal/tomlline"
	"github.com/signerkit/signerkit/signer"
)

// ConfigFileError is a coordinator's or a party's config file that cannot
// be used: it names the file, the key at fault when one is, and what is
// wrong. It wraps signer.ErrInvalidArgument, or the error of a file the
// config names (a share file's *ShareFileError, say).
type ConfigFileError struct {
	Path string
	Line int    // 0 when unknown
	Key  string // empty when the file as a whole is at fault
	Msg  string
	Err  error // the cause, if any; nil means signer.ErrInvalidArgument
}

func (e *ConfigFileError) Error() string {
	var b strings.Builder
	b.WriteString("threshold: config " + e.Path)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Key != "" {
		b.WriteString(": " + e.Key)
	}
	b.WriteString(": " + e.Msg)
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the cause, or signer.ErrInvalidArgument.
func (e *ConfigFileError) Unwrap() error {
	if e.Err != nil {
		return e.Err
	}
	return signer.ErrInvalidArgument
}

// maxConfigFile bounds a config file.
const maxConfigFile = 1 << 20

// configFile reads a TOML config strictly: a key v does not have is an
// error naming it.
type configFile struct {
	path string
	dir  string // relative paths in the file are relative to it
}

func (c *configFile) errorf(key, format string, args ...any) *ConfigFileError {
	return &ConfigFileError{Path: c.path, Key: key, Msg: fmt.Sprintf(format, args...)}
}

func (c *configFile) wrap(key, msg string, err error) *ConfigFileError {
	return &ConfigFileError{Path: c.path, Key: key, Msg: msg, Err: err}
}

func decodeConfigFile(path string, v any) (*configFile, error) {
	c := &configFile{path: path, dir: filepath.Dir(path)}
	data, err := keyfile.Read(path, maxConfigFile)
	if err != nil {
		return nil, c.wrap("", "cannot read it", err)
	}
	if len(data) > maxConfigFile {
		return nil, c.errorf("", "larger than %d bytes", maxConfigFile)
	}
	return c, c.decode(data, v)
}

// decode decodes data into v, a pointer to a config struct. An error
// names its line where the file has one: a parse error's, or the line of
// a key v does not have.
func (c *configFile) decode(data []byte, v any) error {
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(v)
	if err != nil {
		if line, key, msg, ok := tomlline.ParseError(data, err); ok {
			return &ConfigFileError{Path: c.path, Line: line, Key: key, Msg: msg}
		}
		return c.errorf("", "%v", err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		probe := func() any { return reflect.New(reflect.TypeOf(v).Elem()).Interface() }
		return &ConfigFileError{Path: c.path, Line: tomlline.KeyLine(data, und[0], probe), Key: und[0].String(),
			Msg: "unknown key (misspelt, or in the wrong table?)"}
	}
	return nil
}

// file resolves a path from the config against the config's directory.
func (c *configFile) file(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(c.dir, p)
}

// identity loads a certificate and its private key (PEM files).
func (c *configFile) identity(certKey, keyKey, cert, key string) (tls.Certificate, error) {
	switch {
	case cert == "":
		return tls.Certificate{}, c.errorf(certKey, "missing: the PEM certificate this process presents")
	case key == "":
		return tls.Certificate{}, c.errorf(keyKey, "missing: the PEM private key of %s", certKey)
	}
	certPEM, err := keyfile.Read(c.file(cert), maxConfigFile)
	if err != nil {
		return tls.Certificate{}, c.wrap(certKey, c.file(cert), err)
	}
	keyPEM, err := keyfile.Read(c.file(key), maxConfigFile)
	if err != nil {
		return tls.Certificate{}, c.wrap(keyKey, c.file(key), err)
	}
	defer clear(keyPEM)
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, c.wrap(certKey, "the certificate and key do not make a pair", fmt.Errorf("%v: %w", err, signer.ErrInvalidKey))
	}
	return pair, nil
}

// caPool loads a PEM file of CA certificates; "" gives nil.
func (c *configFile) caPool(key, path string) (*x509.CertPool, error) {
	if path == "" {
		return nil, nil
	}
	data, err := keyfile.Read(c.file(path), maxConfigFile)
	if err != nil {
		return nil, c.wrap(key, c.file(path), err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, c.wrap(key, c.file(path)+" holds no PEM certificate", signer.ErrCorrupt)
	}
	return pool, nil
}

// checkPin checks a "sha256:<64 hex digits>" SPKI pin.
func (c *configFile) checkPin(key, pin string) ([sha256.Size]byte, error) {
	h, ok := strings.CutPrefix(pin, spkiPrefix)
	b, err := hex.DecodeString(h)
	if !ok || err != nil || len(b) != sha256.Size {
		return [sha256.Size]byte{}, c.errorf(key, "%.80q is not sha256: and 64 hex digits (signerkit threshold certs prints them)", pin)
	}
	return [sha256.Size]byte(b), nil
}

// CertFilePin returns the SPKI pin ("sha256:" and hex) of the first
// certificate in a PEM file, as the config files take it.
func CertFilePin(path string) (string, error) {
	data, err := keyfile.Read(path, maxConfigFile)
	if err != nil {
		return "", fmt.Errorf("threshold: %s: %w", path, err)
	}
	if len(data) > maxConfigFile {
		return "", fmt.Errorf("threshold: %s: larger than %d bytes: %w", path, maxConfigFile, signer.ErrInvalidArgument)
	}
	b, _ := pem.Decode(data)
	if b == nil || b.Type != "CERTIFICATE" {
		return "", fmt.Errorf("threshold: %s: no PEM certificate: %w", path, signer.ErrCorrupt)
	}
	cert, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		return "", fmt.Errorf("threshold: %s: %v: %w", path, err, signer.ErrCorrupt)
	}
	return SPKIHash(cert), nil
}
