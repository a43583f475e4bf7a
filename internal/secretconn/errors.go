package secretconn

import (
	"errors"
	"fmt"

	"github.com/signerkit/signerkit/signer"
)

// Causes that an *Error carries, reachable with errors.Is. An error that
// carries one of them also wraps signer.ErrProtocol; errors of the
// connection under it (EOF, reset, a deadline) are passed on as they are,
// and a handshake that ran out of time or was cancelled wraps ctx.Err().
var (
	// ErrAuthFailed: the peer's signature of the handshake challenge does
	// not verify with the key it sent. It wraps signer.ErrInvalidSignature.
	ErrAuthFailed = fmt.Errorf("secretconn: peer's challenge signature does not verify: %w", signer.ErrInvalidSignature)

	// ErrBadFrame: a frame failed ChaCha20-Poly1305 authentication (garbled,
	// tampered, replayed or out of order).
	ErrBadFrame = errors.New("secretconn: frame failed authentication")

	// ErrFrameTooLarge: an authenticated frame claims more than 1024 data
	// bytes. It wraps signer.ErrMessageTooLarge.
	ErrFrameTooLarge = fmt.Errorf("secretconn: frame length over 1024: %w", signer.ErrMessageTooLarge)

	// ErrMessageTooLarge: a handshake message is longer than any valid one
	// can be. It wraps signer.ErrMessageTooLarge.
	ErrMessageTooLarge = fmt.Errorf("secretconn: handshake message too large: %w", signer.ErrMessageTooLarge)

	// ErrMalformed: a handshake message does not decode.
	ErrMalformed = errors.New("secretconn: malformed handshake message")

	// ErrBadEphemeralKey: the peer's ephemeral X25519 key is of small order
	// (the shared secret would be known to all) or is our own key sent back.
	ErrBadEphemeralKey = errors.New("secretconn: unacceptable ephemeral key")

	// ErrBadIdentityKey: the peer's Ed25519 identity key is of small order
	// or not canonically encoded (signer.CheckEd25519PublicKey refuses it):
	// under such a key a constant signature verifies for many challenges,
	// so it proves nothing. It wraps signer.ErrInvalidKey.
	ErrBadIdentityKey = fmt.Errorf("secretconn: peer identity key is of small order or not canonical: %w", signer.ErrInvalidKey)

	// ErrUnsupportedKey: the peer's identity key is not Ed25519. It wraps
	// signer.ErrUnsupported.
	ErrUnsupportedKey = fmt.Errorf("secretconn: peer identity key is not Ed25519: %w", signer.ErrUnsupported)
)

// Error is the error Handshake, Read and Write return for a failure of the
// protocol or of the connection under it. Op says where it happened
// ("handshake: ephemeral key exchange", "read", ...).
type Error struct {
	Op  string
	Err error
}

func (e *Error) Error() string { return "secretconn: " + e.Op + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// protocolError wraps cause (one of the sentinels above) with
// signer.ErrProtocol and a detail.
func protocolError(op string, cause error, detail string) *Error {
	if detail == "" {
		return &Error{Op: op, Err: fmt.Errorf("%w: %w", signer.ErrProtocol, cause)}
	}
	return &Error{Op: op, Err: fmt.Errorf("%w: %w: %s", signer.ErrProtocol, cause, detail)}
}
