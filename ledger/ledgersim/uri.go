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
// A query attribute of its own, stall=ledger-go, puts zondax/ledger-go's
// host-side stall (UpstreamStall, NanoSPlus's 50 ms) before every APDU,
// slept in real time in the caller's process, to show the upstream
// transport's cost on a live chain:
//
//	ledgersim:speculos=127.0.0.1:9999?stall=ledger-go
//
// Errors are *signer.URIError values, as ledger.ParseURI's.
func ParseURI(uri string) (ledger.Config, error) {
	if len(uri) <= len(Scheme) || !strings.EqualFold(uri[:len(Scheme)+1], Scheme+":") {
		return ledger.Config{}, &signer.URIError{Problem: "is not a " + Scheme + ": URI"}
	}
	rest, stall, err := cutStall(uri[len(Scheme)+1:])
	if err != nil {
		return ledger.Config{}, err
	}
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
	if stall {
		dial := cfg.Dial
		cfg.Dial = func(ctx context.Context) (ledger.Transport, error) {
			t, err := dial(ctx)
			if err != nil {
				return nil, err
			}
			return UpstreamStall(t, NanoSPlus, Realtime), nil
		}
	}
	return cfg, nil
}

// AttrStall is the ledgersim: query attribute that adds a host-side
// stall; its one value is StallLedgerGo.
const (
	AttrStall     = "stall"
	StallLedgerGo = "ledger-go"
)

// cutStall takes the stall attribute out of a URI's rest (after the
// scheme), which package ledger would refuse as unknown.
func cutStall(rest string) (string, bool, error) {
	path, query, ok := strings.Cut(rest, "?")
	if !ok {
		return rest, false, nil
	}
	var kept []string
	stall := false
	for _, a := range strings.Split(query, "&") {
		name, value, _ := strings.Cut(a, "=")
		if name != AttrStall {
			kept = append(kept, a)
			continue
		}
		if value != StallLedgerGo || stall {
			return "", false, &signer.URIError{Scheme: Scheme, Attr: AttrStall, Problem: "want stall=" + StallLedgerGo + ", once"}
		}
		stall = true
	}
	if len(kept) == 0 {
		return path, stall, nil
	}
	return path + "?" + strings.Join(kept, "&"), stall, nil
}
