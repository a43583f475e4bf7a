package yubihsm

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/signerkit/signerkit/signer"
)

// scheme is the URI scheme ParseURI takes and the package registers.
const scheme = "yubihsm"

// The attributes of a yubihsm: URI: where and which key in the path, how
// in the query (see the package doc).
var (
	uriPath  = []string{"connector", "auth-key", "id", "label", "algorithm"}
	uriQuery = []string{signer.AttrPINSource, signer.AttrPINValue, "sessions", "message-limit", "keep-alive", "request-timeout", "sign-timeout", "domains"}
)

func init() {
	signer.Register(scheme, openURI)
}

// openURI is the scheme's signer.OpenFunc.
func openURI(ctx context.Context, uri string, secret signer.Secret) (signer.Signer, error) {
	cfg, err := ParseURI(uri)
	if err != nil {
		return nil, err
	}
	if cfg.Key.ID == "" && cfg.Key.Label == "" {
		return nil, &signer.URIError{Scheme: scheme, Problem: "names no key: give its id or label"}
	}
	if cfg.Secret == nil {
		cfg.Secret = secret
	}
	if cfg.Secret == nil {
		return nil, &signer.URIError{Scheme: scheme, Attr: signer.AttrPINSource,
			Problem: "missing: the authentication key's password comes from pin-source, pin-value or the caller's secret"}
	}
	s, err := Open(ctx, cfg)
	if err != nil {
		return nil, err // a nil interface, not a nil *Signer
	}
	return s, nil
}

// ParseURI returns the Config that a yubihsm: URI describes (see the
// package doc for its attributes). It checks every attribute but reaches
// no device; it does not read the secret that pin-source names, which
// Open reads when it needs it. Errors are *signer.URIError values that
// name the attribute at fault and never quote pin-value.
func ParseURI(uri string) (Config, error) {
	u, err := signer.ParseURI(uri)
	if err != nil {
		return Config{}, err
	}
	if u.Scheme != scheme {
		return Config{}, &signer.URIError{Scheme: u.Scheme, Problem: "is not a yubihsm: URI"}
	}
	if err := u.Allow(uriPath, uriQuery); err != nil {
		return Config{}, err
	}
	var cfg Config
	if v, ok := u.Attr("connector"); ok {
		if _, err := connectorURL(v); err != nil {
			return Config{}, u.Errorf("connector", "%s", err)
		}
		cfg.Connector = v
	}
	if v, ok := u.Attr("auth-key"); ok {
		id, ok := parseObjectID(v)
		if !ok {
			return Config{}, u.Errorf("auth-key", "%q is not an object id: want 1 to ffff in hex (0x optional), as id", truncate(v))
		}
		cfg.AuthKeyID = id
	}
	if v, ok := u.Attr("id"); ok {
		id, ok := parseObjectID(v)
		if !ok {
			return Config{}, u.Errorf("id", "%q is not an object id: want 1 to ffff in hex (0x optional), as ListKeys gives it", truncate(v))
		}
		cfg.Key.ID = fmt.Sprintf("%04x", id)
	}
	if v, ok := u.Attr("label"); ok {
		if checkLabel(v) != nil {
			return Config{}, u.Errorf("label", "want 1 to %d bytes without NUL", LabelSize)
		}
		cfg.Key.Label = v
	}
	if v, ok := u.Attr("algorithm"); ok {
		a, err := signer.ParseAlgorithm(v)
		switch {
		case err != nil:
			return Config{}, u.Errorf("algorithm", "%q is not an algorithm: want ed25519, p256, p384, secp256k1, rsa-pkcs1v15 or rsa-pss", truncate(v))
		case a.IsBLS():
			e := u.Errorf("algorithm", "%v keys: the YubiHSM 2 has no BLS", a)
			e.Unsupported = true
			return Config{}, e
		}
		cfg.Key.Algorithm = a
	}
	if cfg.Secret, err = u.Secret(); err != nil {
		return Config{}, err
	}
	if n, ok, err := u.Uint("sessions", MaxSessions); err != nil {
		return Config{}, err
	} else if ok {
		if n == 0 {
			return Config{}, u.Errorf("sessions", "want 1 to %d", MaxSessions)
		}
		cfg.Sessions = int(n)
	}
	if n, ok, err := u.Uint("message-limit", 9999); err != nil {
		return Config{}, err
	} else if ok {
		if n == 0 {
			return Config{}, u.Errorf("message-limit", "want 1 to 9999 commands")
		}
		cfg.MessageLimit = uint32(n)
	}
	if v, ok := u.Attr("keep-alive"); ok {
		if v == "off" {
			cfg.KeepAlive = -1
		} else if cfg.KeepAlive, ok = parseDuration(v); !ok {
			return Config{}, u.Errorf("keep-alive", "%q: want a duration such as 15s, or off", truncate(v))
		}
	}
	if v, ok := u.Attr("request-timeout"); ok {
		if cfg.RequestTimeout, ok = parseDuration(v); !ok {
			return Config{}, u.Errorf("request-timeout", "%q: want a duration such as 10s", truncate(v))
		}
	}
	if v, ok := u.Attr("sign-timeout"); ok {
		if cfg.SignTimeout, ok = parseDuration(v); !ok {
			return Config{}, u.Errorf("sign-timeout", "%q: want a duration such as 10s", truncate(v))
		}
	}
	if v, ok := u.Attr("domains"); ok {
		if cfg.Domains, ok = parseDomains(v); !ok {
			return Config{}, u.Errorf("domains", "%q: want domain numbers from 1 to 16 separated by commas (1,2,5), or all", truncate(v))
		}
	}
	return cfg, nil
}

// parseObjectID parses an object id in hex, with or without 0x, as
// KeyInfo.ID and yubihsm-shell's listings write it.
func parseObjectID(s string) (uint16, bool) {
	h := s
	if len(h) > 2 && (h[:2] == "0x" || h[:2] == "0X") {
		h = h[2:]
	}
	if h == "" || len(h) > 4 || strings.ContainsAny(h, "+-_") {
		return 0, false
	}
	v, err := strconv.ParseUint(h, 16, 16)
	return uint16(v), err == nil && v != 0
}

// parseDuration parses a positive time.Duration.
func parseDuration(s string) (time.Duration, bool) {
	d, err := time.ParseDuration(s)
	return d, err == nil && d > 0
}

// parseDomains parses "all" or a comma-separated list of domains 1 to 16
// into a bit mask.
func parseDomains(s string) (uint16, bool) {
	if s == "all" {
		return 0xffff, true
	}
	var mask uint16
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > 16 || f[0] == '+' || f[0] == '0' {
			return 0, false
		}
		mask |= 1 << (n - 1)
	}
	return mask, true
}

// connectorURL checks a connector URL and returns its base, without a
// trailing slash. Its errors never quote the URL, which could carry
// credentials.
func connectorURL(connector string) (string, error) {
	s := connector
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "", errors.New("not a URL")
	case u.User != nil:
		return "", errors.New("carries credentials, which a yubihsm-connector does not take")
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("scheme %q: want http or https", truncate(u.Scheme))
	case u.Host == "":
		return "", errors.New("names no host")
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.Opaque != "":
		return "", fmt.Errorf("has a query or fragment: want the connector's base URL, such as %s", DefaultConnector)
	}
	return u.Scheme + "://" + u.Host + strings.TrimRight(u.EscapedPath(), "/"), nil
}

// truncate keeps untrusted input short in error messages.
func truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
