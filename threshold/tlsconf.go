package threshold

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/signerkit/signerkit/signer"
)

// clientTLS returns a copy of conf for dialing a party or a DKG peer with
// the settings forced: TLS 1.3, and the server's certificate checked
// against RootCAs or by the caller's callback. Go would otherwise fall back
// to the system roots when RootCAs is nil, and skip every check when
// InsecureSkipVerify is set without a callback; both are refused. A
// VerifyPeerCertificate callback is not called on a resumed session, so
// sessions are not cached when one is set (VerifyConnection is called on
// every connection).
func clientTLS(conf *tls.Config) (*tls.Config, error) {
	callback := conf.VerifyPeerCertificate != nil || conf.VerifyConnection != nil
	switch {
	case conf.InsecureSkipVerify && !callback:
		return nil, fmt.Errorf("threshold: TLS: InsecureSkipVerify without a VerifyPeerCertificate or VerifyConnection callback accepts any server: %w", signer.ErrInvalidArgument)
	case conf.RootCAs == nil && !callback:
		return nil, fmt.Errorf("threshold: TLS: RootCAs is nil and there is no verification callback (Go would trust the system roots): %w", signer.ErrInvalidArgument)
	}
	c := conf.Clone()
	c.MinVersion = tls.VersionTLS13
	if c.MaxVersion != 0 && c.MaxVersion < tls.VersionTLS13 {
		c.MaxVersion = tls.VersionTLS13
	}
	if c.VerifyPeerCertificate != nil {
		c.ClientSessionCache = nil
	}
	return c, nil
}

// coordinatorPins is the set of coordinator identities a party admits.
type coordinatorPins struct {
	names []string
	spki  [][sha256.Size]byte
}

// spkiPrefix marks a Coordinators entry that pins a public key.
const spkiPrefix = "sha256:"

func parseCoordinators(list []string) (*coordinatorPins, error) {
	if len(list) == 0 {
		return nil, fmt.Errorf("threshold: PartyConfig.Coordinators is empty: a party must pin the coordinators it serves: %w", signer.ErrInvalidArgument)
	}
	p := &coordinatorPins{}
	for _, e := range list {
		if h, ok := strings.CutPrefix(e, spkiPrefix); ok {
			b, err := hex.DecodeString(h)
			if err != nil || len(b) != sha256.Size {
				return nil, fmt.Errorf("threshold: PartyConfig.Coordinators entry %q is not sha256: and 64 hex digits: %w", e, signer.ErrInvalidArgument)
			}
			p.spki = append(p.spki, [sha256.Size]byte(b))
			continue
		}
		if e == "" {
			return nil, fmt.Errorf("threshold: PartyConfig.Coordinators has an empty entry: %w", signer.ErrInvalidArgument)
		}
		p.names = append(p.names, e)
	}
	return p, nil
}

// SPKIHash returns the Coordinators entry that pins cert's public key:
// "sha256:" and the hex SHA-256 of its SubjectPublicKeyInfo.
func SPKIHash(cert *x509.Certificate) string {
	h := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	return spkiPrefix + hex.EncodeToString(h[:])
}

// serverAuth reports whether cert may authenticate a server: a party's
// certificate (the network DKG issues participants certificates good for
// both ends) is never admitted by name as a coordinator.
func serverAuth(cert *x509.Certificate) bool {
	return len(cert.ExtKeyUsage) == 0 && len(cert.UnknownExtKeyUsage) == 0 ||
		slices.Contains(cert.ExtKeyUsage, x509.ExtKeyUsageServerAuth) ||
		slices.Contains(cert.ExtKeyUsage, x509.ExtKeyUsageAny)
}

var errNotCoordinator = errors.New("threshold: the client certificate is not a configured coordinator's")

// check admits a client certificate pinned by its key, or valid for a
// coordinator's name and not good for server authentication, and not
// carrying the party's own key.
func (p *coordinatorPins) check(leaf *x509.Certificate, own [][]byte) error {
	h := sha256.Sum256(leaf.RawSubjectPublicKeyInfo)
	for _, pin := range p.spki {
		if pin == h {
			return nil
		}
	}
	for _, k := range own {
		if bytes.Equal(k, leaf.RawSubjectPublicKeyInfo) {
			return fmt.Errorf("%w: it is this party's own key", errNotCoordinator)
		}
	}
	for _, n := range p.names {
		if leaf.VerifyHostname(n) == nil {
			if serverAuth(leaf) {
				return fmt.Errorf("%w: it is valid for %q but also for server authentication, as a party's is (pin its key to admit it)", errNotCoordinator, n)
			}
			return nil
		}
	}
	return errNotCoordinator
}

// partyTLS returns the party's server configuration: TLS 1.3, a client
// certificate required and checked against ClientCAs (or the caller's
// VerifyPeerCertificate), then against the pinned coordinators in
// VerifyConnection, which Go calls on every connection, resumed or not.
func partyTLS(conf *tls.Config, pins *coordinatorPins) (*tls.Config, error) {
	switch {
	case conf.GetConfigForClient != nil:
		// Go would use the config it returns, without the settings below.
		return nil, fmt.Errorf("threshold: PartyConfig.TLS.GetConfigForClient is not supported (it would bypass the party's TLS settings): %w", signer.ErrInvalidArgument)
	case conf.ClientCAs == nil && conf.VerifyPeerCertificate == nil:
		return nil, fmt.Errorf("threshold: PartyConfig.TLS needs ClientCAs or VerifyPeerCertificate to admit coordinators: %w", signer.ErrInvalidArgument)
	}
	t := conf.Clone()
	t.MinVersion = tls.VersionTLS13
	if t.MaxVersion != 0 && t.MaxVersion < tls.VersionTLS13 {
		t.MaxVersion = tls.VersionTLS13
	}
	if t.ClientCAs != nil {
		t.ClientAuth = tls.RequireAndVerifyClientCert
	} else {
		t.ClientAuth = tls.RequireAnyClientCert // VerifyPeerCertificate pins the keys
	}
	if t.VerifyPeerCertificate != nil {
		// Not called on a resumed session.
		t.SessionTicketsDisabled = true
	}
	var own [][]byte
	for _, c := range t.Certificates {
		if c.Leaf != nil {
			own = append(own, c.Leaf.RawSubjectPublicKeyInfo)
		} else if len(c.Certificate) > 0 {
			if leaf, err := x509.ParseCertificate(c.Certificate[0]); err == nil {
				own = append(own, leaf.RawSubjectPublicKeyInfo)
			}
		}
	}
	user := t.VerifyConnection
	t.VerifyConnection = func(cs tls.ConnectionState) error {
		if user != nil {
			if err := user(cs); err != nil {
				return err
			}
		}
		if len(cs.PeerCertificates) == 0 {
			return errNotCoordinator
		}
		return pins.check(cs.PeerCertificates[0], own)
	}
	return t, nil
}

// serverTLS is a party's server configuration from its config (field
// names it in errors): a server certificate required, the coordinators
// parsed, and partyTLS's settings.
func serverTLS(conf *tls.Config, coordinators []string, field string) (*tls.Config, error) {
	if conf == nil || len(conf.Certificates) == 0 && conf.GetCertificate == nil {
		return nil, fmt.Errorf("threshold: %s.TLS needs a server certificate: %w", field, signer.ErrInvalidArgument)
	}
	pins, err := parseCoordinators(coordinators)
	if err != nil {
		return nil, err
	}
	return partyTLS(conf, pins)
}
