package yubihsmsim

import (
	"context"
	"errors"
	"strings"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/yubihsm"
)

// Scheme is the URI scheme this package registers with signer.Open.
const Scheme = "yubihsmsim"

func init() {
	signer.Register(Scheme, openURI)
}

// openURI opens a yubihsmsim: URI: a yubihsm: URI under another scheme,
// whose key is reached through HTTPClient.
func openURI(ctx context.Context, uri string, secret signer.Secret) (signer.Signer, error) {
	cfg, err := ParseURI(uri)
	switch {
	case err != nil:
		return nil, err
	case cfg.Key.ID == "" && cfg.Key.Label == "":
		return nil, &signer.URIError{Scheme: Scheme, Problem: "names no key: give its id or label"}
	case cfg.Secret == nil && secret == nil:
		return nil, &signer.URIError{Scheme: Scheme, Attr: signer.AttrPINSource, Problem: "missing: give pin-source, pin-value or the caller's secret"}
	case cfg.Secret == nil:
		cfg.Secret = secret
	}
	cfg.HTTPClient = HTTPClient()
	s, err := yubihsm.Open(ctx, cfg)
	if err != nil {
		cfg.HTTPClient.CloseIdleConnections()
		return nil, err // a nil interface, not a nil *Signer
	}
	return s, nil
}

// ParseURI returns the yubihsm.Config that a yubihsmsim: URI describes:
// the Config yubihsm.ParseURI returns for the same URI under the scheme
// yubihsm, with HTTPClient left for the caller to set. Errors are
// *signer.URIError values, as yubihsm.ParseURI's.
func ParseURI(uri string) (yubihsm.Config, error) {
	rest, ok := cutScheme(uri, Scheme)
	if !ok {
		return yubihsm.Config{}, &signer.URIError{Problem: "is not a " + Scheme + ": URI"}
	}
	cfg, err := yubihsm.ParseURI("yubihsm:" + rest)
	var ue *signer.URIError
	if errors.As(err, &ue) {
		ue.Scheme = Scheme
	}
	return cfg, err
}

// cutScheme returns uri without its scheme, when that is scheme (in any
// case).
func cutScheme(uri, scheme string) (string, bool) {
	if len(uri) <= len(scheme) || uri[len(scheme)] != ':' || !strings.EqualFold(uri[:len(scheme)], scheme) {
		return "", false
	}
	return uri[len(scheme)+1:], true
}
