package gnokeyhome

import (
	"context"

	"github.com/signerkit/signerkit/internal/keyuri"
	"github.com/signerkit/signerkit/keybase"
	"github.com/signerkit/signerkit/signer"
)

// The attributes of a gnokeyhome: URI.
const (
	attrHome  = "home"
	attrLabel = "label"
)

// ParseURI returns the Config that a gnokeyhome: URI describes:
//
//	gnokeyhome:home=/home/val/.config/gno;label=validator?pin-source=env:GNOKEY_PASS
//	gnokeyhome:label=g1jg8mtutu9khhfwc4nxmuhcpftf0pajdhfvsqf5?pin-source=/run/secrets/pass&mode=per-sign
//	gnokeyhome:label=my%20key?pin-source=env:GNOKEY_PASS
//
// Path attributes: home, gnokey's home directory (optional: gnokey's
// default, see Config.Home), and label, the key's gnokey name or its
// address "g1…" (required; percent-encode what a URI cannot hold as it
// is, such as ';', '?', '&', '%' and spaces). Query attributes:
// pin-source or pin-value for the passphrase (see signer.URI; it sets
// Config.Secret), and mode, unlock-once (the default) or per-sign. Errors
// are *signer.URIError values that name the attribute at fault and never
// quote a pin-value or a label.
func ParseURI(uri string) (Config, error) { return parseURI(uri, true) }

// parseURI is ParseURI; a store's URI (storeuri.go) may leave the label
// out.
func parseURI(uri string, needLabel bool) (Config, error) {
	u, err := keyuri.Parse(uri, "gnokeyhome", attrHome, attrLabel)
	if err != nil {
		return Config{}, err
	}
	var cfg Config
	if home, ok := u.Attr(attrHome); ok {
		if home == "" {
			return Config{}, u.Errorf(attrHome, "is empty: leave it out for gnokey's default home")
		}
		cfg.Home = home
	}
	label, ok := u.Attr(attrLabel)
	if (!ok && needLabel) || (ok && label == "") {
		return Config{}, u.Errorf(attrLabel, "is required: the key's gnokey name or address")
	}
	cfg.Key.Label = label
	if cfg.Mode, err = keybase.ParseModeAttr(u); err != nil {
		return Config{}, err
	}
	if cfg.Secret, err = u.Secret(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

func init() {
	signer.Register("gnokeyhome", func(ctx context.Context, uri string, secret signer.Secret) (signer.Signer, error) {
		cfg, err := ParseURI(uri)
		if err != nil {
			return nil, err
		}
		if cfg.Secret == nil {
			cfg.Secret = secret
		}
		s, err := Open(ctx, cfg)
		if err != nil {
			return nil, err // not a nil *Signer in a non-nil interface
		}
		return s, nil
	})
}
