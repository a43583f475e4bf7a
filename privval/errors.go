package privval

import (
	"errors"
	"fmt"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/signer"
)

// ProtocolError is a frame from the validator that does not follow the
// protocol: garbled, of an unknown or unexpected type, or larger than the
// protocol allows, or refused by the secure channel under it (a
// SecretConnection frame that fails authentication: tampered, replayed,
// out of order). The connection it came on is closed (an Endpoint dials
// again). It wraps signer.ErrProtocol, signer.ErrMessageTooLarge too when
// TooLarge, and the channel's error when Err is set.
type ProtocolError struct {
	// Reason says what is wrong.
	Reason string
	// TooLarge is set when the frame's length is above the protocol's cap.
	TooLarge bool
	// Unknown is set for a well-formed frame of a message type this
	// package does not know (a newer protocol version).
	Unknown bool
	// Err is the secure channel's error for a frame it refused (one that
	// wraps signer.ErrProtocol, such as secretconn's bad-frame error), or
	// nil.
	Err error
}

// Error returns "privval: protocol error: " and the reason.
func (e *ProtocolError) Error() string { return "privval: protocol error: " + e.Reason }

// Unwrap returns signer.ErrProtocol, signer.ErrMessageTooLarge for a frame
// that is too large, and Err when set.
func (e *ProtocolError) Unwrap() []error {
	errs := []error{signer.ErrProtocol}
	if e.TooLarge {
		errs = append(errs, signer.ErrMessageTooLarge)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

// channelError returns err, an error reading from the connection, as a
// *ProtocolError when the secure channel refused what the peer sent (err
// wraps signer.ErrProtocol), so that it is counted as a protocol error and
// not as the peer hanging up.
func channelError(err error) error {
	var pe *ProtocolError
	if err == nil || !errors.Is(err, signer.ErrProtocol) || errors.As(err, &pe) {
		return err
	}
	return &ProtocolError{Reason: "secure channel: " + err.Error(), Err: err}
}

// ErrorCode is the code of a RemoteSignerError sent to the validator.
// CometBFT and gno carry it without interpreting it.
type ErrorCode int32

// Error codes.
const (
	// CodeUnknown is an error of no other kind.
	CodeUnknown ErrorCode = 0
	// CodeDoubleSign: the guard refused the sign as a double sign.
	CodeDoubleSign ErrorCode = 1
	// CodeInvalidRequest: the request was well formed but cannot be
	// signed (another chain id, a vote type that does not exist, an
	// extension on a message that takes none, a missing vote).
	CodeInvalidRequest ErrorCode = 2
	// CodeSignerFailure: the guard or the signer under it failed (state
	// storage, a device, a timeout).
	CodeSignerFailure ErrorCode = 3
)

// String returns the code's name.
func (c ErrorCode) String() string {
	switch c {
	case CodeUnknown:
		return "unknown"
	case CodeDoubleSign:
		return "double-sign"
	case CodeInvalidRequest:
		return "invalid-request"
	case CodeSignerFailure:
		return "signer-failure"
	}
	return fmt.Sprintf("ErrorCode(%d)", int32(c))
}

// codeOf classifies an error from the guard.
func codeOf(err error) ErrorCode {
	var ts *guard.TimestampError
	switch {
	case errors.Is(err, signer.ErrDoubleSign), errors.As(err, &ts):
		return CodeDoubleSign
	case errors.Is(err, signer.ErrInvalidMessage), errors.Is(err, signer.ErrMessageTooLarge):
		return CodeInvalidRequest
	}
	return CodeSignerFailure
}

// invalidRequest is a request the endpoint refuses itself.
func invalidRequest(format string, args ...any) error {
	return fmt.Errorf("privval: %s: %w", fmt.Sprintf(format, args...), signer.ErrInvalidMessage)
}
