package signer

import "errors"

// Sentinel errors. Backends return errors that wrap one of these (often
// through a typed error that carries the device's own code, such as
// *ledger.StatusError), so callers branch with errors.Is whatever the
// backend. Context errors are returned wrapped as they are: a sign that ran
// out of time wraps context.DeadlineExceeded, one that was cancelled
// wraps context.Canceled.
var (
	// ErrClosed: the Signer, or the session or device under it, was closed.
	ErrClosed = errors.New("signer: closed")

	// ErrUnsupported: the backend, key or build cannot do what was asked
	// (an algorithm, an option such as Ed25519ph, a cgo-only transport in a
	// pure-Go build).
	ErrUnsupported = errors.New("signer: unsupported")

	// ErrWrongPassphrase: a passphrase, password or PIN was refused. Callers
	// should not retry with the same secret: tokens lock after a few tries.
	ErrWrongPassphrase = errors.New("signer: wrong passphrase")

	// ErrPermissionDenied: the key, session or token does not allow this
	// operation (a YubiHSM capability missing, PKCS#11
	// CKR_KEY_FUNCTION_NOT_PERMITTED).
	ErrPermissionDenied = errors.New("signer: permission denied")

	// ErrRejected: the user refused the operation on the device.
	ErrRejected = errors.New("signer: rejected on the device")

	// ErrDoubleSign: the device refused to sign because it would be a
	// double sign (a vote or proposal at a height, round and step it has
	// already signed or passed).
	ErrDoubleSign = errors.New("signer: refused as a double sign")

	// ErrInvalidMessage: the message or digest is malformed for this key or
	// device (sign bytes the validator app cannot parse, a digest whose
	// length does not match its hash).
	ErrInvalidMessage = errors.New("signer: invalid message")

	// ErrMessageTooLarge: the message is longer than the device can take.
	ErrMessageTooLarge = errors.New("signer: message too large")

	// ErrInvalidSignature: a signature failed verification.
	ErrInvalidSignature = errors.New("signer: invalid signature")

	// ErrDeviceNotFound: no device, token or connector answered where one
	// was expected.
	ErrDeviceNotFound = errors.New("signer: device not found")

	// ErrDeviceLocked: the device is locked and must be unlocked by its
	// owner.
	ErrDeviceLocked = errors.New("signer: device locked")

	// ErrAppNotOpen: the device is present but the app the signer needs is
	// not running on it.
	ErrAppNotOpen = errors.New("signer: app not open on the device")

	// ErrDisconnected: the device went away in the middle of use
	// (unplugged, connector down). Reopening may succeed once it is back.
	ErrDisconnected = errors.New("signer: device disconnected")

	// ErrBusy: the device has no capacity right now (all sessions in use).
	ErrBusy = errors.New("signer: device busy")

	// ErrInvalidKey: key material is malformed or inconsistent (a seed
	// out of range, a private key whose public half does not match).
	ErrInvalidKey = errors.New("signer: invalid key")

	// ErrInvalidArgument: a configuration value, key name, label or URI is
	// not acceptable.
	ErrInvalidArgument = errors.New("signer: invalid argument")

	// ErrSessionExpired: the device session expired or was closed behind
	// the signer's back. Backends open a new one and retry once before they
	// return this.
	ErrSessionExpired = errors.New("signer: session expired")

	// ErrKeyNotFound: no key matches the given name, label or id.
	ErrKeyNotFound = errors.New("signer: key not found")

	// ErrKeyExists: a key with that name, label or id already exists.
	ErrKeyExists = errors.New("signer: key already exists")

	// ErrCorrupt: stored data (a key file, its armor or checksum) is
	// damaged or not in the expected format.
	ErrCorrupt = errors.New("signer: corrupt data")

	// ErrProtocol: a device or peer answered with a frame that does not
	// follow its protocol (garbled, wrong length, bad MAC).
	ErrProtocol = errors.New("signer: protocol error")
)
