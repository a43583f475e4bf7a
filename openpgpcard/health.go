package openpgpcard

import (
	"context"
	"fmt"

	"github.com/signerkit/signerkit/openpgpcard/internal/iso7816"
	"github.com/signerkit/signerkit/signer"
)

var _ signer.HealthChecker = (*Signer)(nil)

// Health reads the key's attributes (GET DATA C1, C2 or C3: one APDU, no
// PIN, nothing signed) and checks they are still those read at open. It
// waits, within ctx, for a command in flight, and dials again after a
// failure, as a sign would. Errors are typed as SignContext's: a card gone
// wraps signer.ErrDisconnected or ErrDeviceNotFound, changed attributes
// ErrKeyNotFound, and after Close ErrClosed.
func (s *Signer) Health(ctx context.Context) (err error) {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("openpgpcard: health check: %w", err)
	}
	l, err := s.acquire(ctx)
	if err != nil {
		return err
	}
	defer func() { err = s.release(l, err) }()
	v, err := l.transmit(ctx, "GET DATA", iso7816.Command{INS: 0xCA, P2: 0xC1 + byte(s.cfg.Key)})
	if err != nil {
		return err
	}
	a, err := parseAttributes(v)
	if err != nil {
		return err
	}
	if a != s.attr {
		return fmt.Errorf("openpgpcard: health check: the %v key is now %v, not the %v opened: %w", s.cfg.Key, a, s.attr, signer.ErrKeyNotFound)
	}
	return nil
}
