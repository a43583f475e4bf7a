package ledger

import (
	"context"
	"fmt"

	"github.com/signerkit/signerkit/signer"
)

var _ signer.HealthChecker = (*Signer)(nil)

// Health asks the validator app for its version (GET_VERSION, one APDU,
// no user interaction): a round trip that signs nothing and leaves the
// app's double-sign state as it was. The device does one thing at a
// time, so Health waits, within ctx, for a sign in flight, and a sign
// waits for Health's one APDU. A transport dropped by an earlier failure
// is dialled again first, as a sign would.
//
// Errors are typed as SignContext's: a device that went away wraps
// signer.ErrDisconnected or ErrDeviceNotFound, another app (or the
// dashboard) in front wraps ErrAppNotOpen, a locked device
// ErrDeviceLocked, a version other than the one read at open
// ErrAppNotOpen too (the app was replaced), ctx's end its error, and
// after Close ErrClosed.
func (s *Signer) Health(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("ledger: health check: %w", err)
	}
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("ledger: health check: waiting for the device: %w", ctx.Err())
	}
	defer func() { <-s.sem }()
	tr, err := s.transport(ctx)
	if err != nil {
		return wrap("health check", err)
	}
	resp, err := s.exchange(ctx, tr, INSGetVersion, command(INSGetVersion, 0, 0, nil))
	if err != nil {
		return wrap("health check", s.failed(tr, err))
	}
	if len(resp) != versionReplyLen {
		return s.failed(tr, fmt.Errorf("ledger: health check: GET_VERSION: %d-byte reply, want %d: %w", len(resp), versionReplyLen, signer.ErrProtocol))
	}
	v := Version{Testing: resp[0] == 0xFF, Major: resp[1], Minor: resp[2], Patch: resp[3]}
	if v != s.version {
		return fmt.Errorf("ledger: health check: the app is version %v, not the %v opened: %w", v, s.version, signer.ErrAppNotOpen)
	}
	return nil
}
