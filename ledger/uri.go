package ledger

import (
	"context"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/signerkit/signerkit/signer"
)

// The attributes of a ledger: URI, all in its path.
const (
	attrHID         = "hid"
	attrSpeculos    = "speculos"
	attrChunkSize   = "chunk-size"
	attrMinVersion  = "min-version"
	attrSignTimeout = "sign-timeout"
)

func init() {
	signer.Register("ledger", openURI)
}

// openURI is the OpenFunc of the ledger scheme. The device needs no
// secret (its owner unlocks it on the device), so secret is not used.
func openURI(ctx context.Context, uri string, _ signer.Secret) (signer.Signer, error) {
	cfg, err := ParseURI(uri)
	if err != nil {
		return nil, err
	}
	s, err := Open(ctx, cfg)
	if err != nil {
		return nil, err // not s: a nil *Signer in the interface is not nil
	}
	return s, nil
}

// ParseURI returns the Config that a ledger: URI describes. signer.Open
// opens such a URI once this package is imported. The path attributes say
// which device:
//
//	hid=<device path>      the Ledger at this HID path (Config.Path)
//	speculos=<host:port>   Speculos's APDU server (SpeculosDialer)
//
// and the query attributes how to talk to it:
//
//	chunk-size=<1–250>     Config.ChunkSize
//	min-version=<x.y.z>    Config.MinVersion
//	sign-timeout=<30s>     Config.SignTimeout, a positive duration
//
// hid and speculos exclude each other; with neither, the URI means the
// first Ledger found over USB HID, so "ledger:" alone is the usual
// Ledger. For example
//
//	ledger:
//	ledger:hid=/dev/hidraw3?chunk-size=32
//	ledger:speculos=127.0.0.1:9999?min-version=0.9.1
//
// The device needs no secret, so pin-source and pin-value are refused as
// unknown attributes. Errors are *signer.URIError values, which name the
// attribute at fault and wrap signer.ErrInvalidArgument.
func ParseURI(uri string) (Config, error) {
	u, err := signer.ParseURI(uri)
	if err != nil {
		return Config{}, err
	}
	if u.Scheme != "ledger" {
		return Config{}, &signer.URIError{Scheme: u.Scheme, Problem: "not a ledger: URI"}
	}
	if err := u.Allow([]string{attrHID, attrSpeculos}, []string{attrChunkSize, attrMinVersion, attrSignTimeout}); err != nil {
		return Config{}, err
	}
	var cfg Config
	path, hasHID := u.Attr(attrHID)
	addr, hasSpeculos := u.Attr(attrSpeculos)
	switch {
	case hasHID && hasSpeculos:
		return Config{}, u.Errorf(attrSpeculos, "given with hid: a URI names one device")
	case hasHID:
		if path == "" {
			return Config{}, u.Errorf(attrHID, "is empty (leave it out for the first Ledger found)")
		}
		cfg.Path = path
	case hasSpeculos:
		if _, port, err := net.SplitHostPort(addr); err != nil || port == "" {
			return Config{}, u.Errorf(attrSpeculos, "%q is not host:port", truncate(addr))
		}
		cfg.Dial = SpeculosDialer(addr)
	}
	n, ok, err := u.Uint(attrChunkSize, MaxChunkSize)
	switch {
	case err != nil:
		return Config{}, err
	case ok && n == 0:
		return Config{}, u.Errorf(attrChunkSize, "0 is less than 1")
	}
	cfg.ChunkSize = int(n)
	if v, ok := u.Attr(attrMinVersion); ok {
		if cfg.MinVersion, ok = parseVersion(v); !ok {
			return Config{}, u.Errorf(attrMinVersion, "%q is not a version x.y.z of three numbers 0–255", truncate(v))
		}
	}
	if v, ok := u.Attr(attrSignTimeout); ok {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return Config{}, u.Errorf(attrSignTimeout, "%q is not a positive duration such as 30s", truncate(v))
		}
		cfg.SignTimeout = d
	}
	return cfg, nil
}

// parseVersion parses "x.y.z", each a decimal number 0–255.
func parseVersion(s string) (Version, bool) {
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return Version{}, false
	}
	var n [3]uint8
	for i, p := range parts {
		if p == "" || p[0] < '0' || p[0] > '9' {
			return Version{}, false
		}
		v, err := strconv.ParseUint(p, 10, 8)
		if err != nil {
			return Version{}, false
		}
		n[i] = uint8(v)
	}
	return Version{Major: n[0], Minor: n[1], Patch: n[2]}, true
}

// truncate keeps untrusted input short in error messages.
func truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
