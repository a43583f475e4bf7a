package ledgersim

import (
	"context"
	"errors"
	"strings"

	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/signer"
)

// Scheme is the URI scheme this package registers with signer.Open.
const Scheme = "ledgersim"

func init() {
	signer.Register(Scheme, openURI)
}

// openURI opens a ledgersim: URI.
func openURI(ctx context.Context, uri string, _ signer.Secret) (signer.Signer, error) {
	cfg, err := ParseURI(uri)
	if err != nil {
		return nil, err
	}
	s, err := ledger.Open(ctx, cfg)
	if err != nil {
		return nil, err // not s: a nil *Signer in the interface is not nil
	}
	return s, nil
}

// ParseURI returns the ledger.Config that a ledgersim: URI describes: a
// ledger: URI (ledger.ParseURI) under another scheme, which must name the
// simulator's Speculos face with speculos=<host:port>, reached through
// SpeculosDialer. For example
//
//	ledgersim:speculos=127.0.0.1:9999?sign-timeout=5s
//
// Errors are *signer.URIError values, as ledger.ParseURI's.
func ParseURI(uri string) (ledger.Config, error) {
	if len(uri) <= len(Scheme) || !strings.EqualFold(uri[:len(Scheme)+1], Scheme+":") {
		return ledger.Config{}, &signer.URIError{Problem: "is not a " + Scheme + ": URI"}
	}
	rest := uri[len(Scheme)+1:]
	cfg, err := ledger.ParseURI("ledger:" + rest)
	var ue *signer.URIError
	if errors.As(err, &ue) {
		ue.Scheme = Scheme
	}
	if err != nil {
		return ledger.Config{}, err
	}
	u, err := signer.ParseURI("ledger:" + rest)
	if err != nil {
		return ledger.Config{}, err
	}
	addr, ok := u.Attr("speculos")
	if !ok {
		return ledger.Config{}, &signer.URIError{Scheme: Scheme, Attr: "speculos", Problem: "missing: a ledgersim: URI names the simulator's Speculos face, host:port"}
	}
	cfg.Dial = SpeculosDialer(addr)
	return cfg, nil
}
