//go:build cgo

package pkcs11

import (
	"context"
	"fmt"

	p11 "github.com/miekg/pkcs11"

	"github.com/signerkit/signerkit/signer"
)

var _ signer.HealthChecker = (*Signer)(nil)

// Health asks the token whether it still answers: C_GetSessionInfo on a
// session of the pool (opened and logged in, if none is idle, as for a
// sign) and C_GetTokenInfo on its slot. It signs nothing and creates or
// changes no object. A session that died is replaced as for a sign. Health
// takes one of the pool's sessions for the two calls, so with
// Config.PoolSize signs in flight it waits, within ctx, for one to finish.
//
// Errors are typed as SignContext's: a token removed wraps
// signer.ErrDisconnected, a slot gone ErrDeviceNotFound, a token that did
// not answer by ctx's deadline context.DeadlineExceeded (the calls go on
// in the background and give the session back when the module returns),
// and after Close signer.ErrClosed.
func (k *Signer) Health(ctx context.Context) error {
	if k.closed.Load() {
		return fmt.Errorf("pkcs11: key %q: %w", k.label, signer.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("pkcs11: health check: %w", err)
	}
	p := k.tok.pool
	check := func() error {
		return p.do(ctx, &opStats{}, func(sh p11.SessionHandle) error {
			if _, err := p.mod.ctx.GetSessionInfo(sh); err != nil {
				return wrap("C_GetSessionInfo", err)
			}
			if _, err := p.mod.ctx.GetTokenInfo(p.slot); err != nil {
				return wrap("C_GetTokenInfo", err)
			}
			return nil
		})
	}
	if ctx.Done() == nil {
		return k.healthErr(check())
	}
	ch := make(chan error, 1)
	go func() { ch <- check() }()
	select {
	case err := <-ch:
		return k.healthErr(err)
	case <-ctx.Done():
		select {
		case err := <-ch:
			return k.healthErr(err)
		default:
		}
		return fmt.Errorf("pkcs11: health check of token %q: %w", k.tok.label, ctx.Err())
	}
}

func (k *Signer) healthErr(err error) error {
	if err == nil {
		return nil
	}
	if k.closed.Load() {
		return fmt.Errorf("pkcs11: key %q: %w (%s)", k.label, signer.ErrClosed, unprefixed(err))
	}
	return &healthError{msg: fmt.Sprintf("pkcs11: health check of token %q: %s", k.tok.label, unprefixed(err)), err: err}
}

// healthError says that a health check failed, with the prefix once, and
// unwraps to the module's error.
type healthError struct {
	msg string
	err error
}

func (e *healthError) Error() string { return e.msg }
func (e *healthError) Unwrap() error { return e.err }
