package openpgpcard

import (
	"context"
	"time"

	"github.com/signerkit/signerkit/internal/keyuri"
	"github.com/signerkit/signerkit/signer"
)

const scheme = "openpgpcard"

// The attributes of an openpgpcard: URI.
const (
	attrReader      = "reader"
	attrKey         = "key"
	attrSignTimeout = "sign-timeout"
)

func init() {
	signer.Register(scheme, openURI)
	signer.RegisterStore(scheme, keyuri.StoreOpener(ParseURI, func(c *Config) signer.KeyRef {
		return signer.KeyRef{Label: c.Key.String()}
	}, OpenStore))
}

// openURI is the scheme's signer.OpenFunc: the caller's secret is PW1 when
// the URI gives none.
func openURI(ctx context.Context, uri string, secret signer.Secret) (signer.Signer, error) {
	cfg, err := ParseURI(uri)
	if err != nil {
		return nil, err
	}
	if cfg.PIN == nil {
		cfg.PIN = secret
	}
	s, err := Open(ctx, cfg)
	if err != nil {
		return nil, err // a nil interface, not a nil *Signer
	}
	return s, nil
}

// ParseURI returns the Config an openpgpcard: URI describes. Its path
// attributes say which card and key:
//
//	reader=<name>      Config.Reader: the PC/SC reader whose name contains it
//	key=sig|dec|aut    Config.Key (sig when left out)
//
// and its query attributes the PIN and the bound on Sign:
//
//	pin-source=<src>   PW1, as signer.SecretSource reads it
//	pin-value=<pin>    PW1 itself (for tests; prefer pin-source)
//	sign-timeout=<d>   Config.SignTimeout, a positive duration
//
// For example
//
//	openpgpcard:
//	openpgpcard:reader=Yubico;key=aut?pin-source=env:CARD_PIN
//
// Errors are *signer.URIError values that name the attribute at fault.
func ParseURI(uri string) (Config, error) {
	u, err := signer.ParseURI(uri)
	if err != nil {
		return Config{}, err
	}
	if u.Scheme != scheme {
		return Config{}, &signer.URIError{Scheme: u.Scheme, Problem: "not an openpgpcard: URI"}
	}
	if err := u.Allow([]string{attrReader, attrKey}, []string{signer.AttrPINSource, signer.AttrPINValue, attrSignTimeout}); err != nil {
		return Config{}, err
	}
	var cfg Config
	if v, ok := u.Attr(attrReader); ok {
		if v == "" {
			return Config{}, u.Errorf(attrReader, "is empty (leave it out for the first card found)")
		}
		cfg.Reader = v
	}
	if v, ok := u.Attr(attrKey); ok {
		k, ok := parseKey(v)
		if !ok {
			return Config{}, u.Errorf(attrKey, "%q is not sig, dec or aut", truncate(v))
		}
		cfg.Key = k
	}
	if v, ok := u.Attr(attrSignTimeout); ok {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return Config{}, u.Errorf(attrSignTimeout, "%q is not a positive duration such as 30s", truncate(v))
		}
		cfg.SignTimeout = d
	}
	if cfg.PIN, err = u.Secret(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

func parseKey(s string) (Key, bool) {
	for i, n := range keyNames {
		if s == n {
			return Key(i), true
		}
	}
	return 0, false
}

func truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
