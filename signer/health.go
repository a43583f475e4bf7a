package signer

import "context"

// HealthChecker is implemented by signers whose device can be asked,
// cheaply, whether it still answers: a daemon's readiness probe, or a
// loop that waits for an unplugged device to come back. Callers find it
// by type assertion (CheckHealth does, through wrappers); a signer that
// has no device to lose (a key in process memory or in a file) need not
// implement it.
//
// Health makes one round trip to the device (an echo, a version or
// session query, never a sign), so it signs nothing and changes no state
// a sign depends on: no key, no double-sign state. It returns nil when
// the device answered, and otherwise an error typed as SignContext's are:
// wrapping ErrDisconnected or ErrDeviceNotFound for a device that went
// away, ErrAppNotOpen, ErrDeviceLocked, ErrClosed after Close, and
// ctx.Err() when ctx ended first. Like SignContext it returns within ctx's
// deadline even when the device hangs. Health may wait behind a sign in
// flight on a device that does one thing at a time, and a sign may wait
// behind a Health in flight, for that one round trip.
type HealthChecker interface {
	Health(ctx context.Context) error
}

// CheckHealth asks s for its health: s.Health when s implements
// HealthChecker, else that of the signer it wraps (found through an
// Unwrap() Signer method, as on Instrumented). A signer that implements
// neither has no device to lose, and CheckHealth returns nil. ok reports
// whether a HealthChecker was found.
func CheckHealth(ctx context.Context, s Signer) (ok bool, err error) {
	for cur := s; cur != nil; {
		if h, is := cur.(HealthChecker); is {
			return true, h.Health(ctx)
		}
		u, is := cur.(interface{ Unwrap() Signer })
		if !is {
			break
		}
		cur = u.Unwrap()
	}
	return false, nil
}
