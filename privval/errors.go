package privval

import (
	"errors"
	"fmt"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/signer"
)

// ProtocolError is a frame from the validator that does not follow the
// protocol: garbled, of an unknown or unexpected type, or larger than the
// protocol allows. The connection it came on is closed (an Endpoint dials
// again). It wraps signer.ErrProtocol, and signer.ErrMessageTooLarge too
// when TooLarge.
type ProtocolError struct {
	// Reason says what is wrong.
	Reason string
	// TooLarge is set when the frame's length is above the protocol's cap.
	TooLarge bool
	// Unknown is set for a well-formed frame of a message type this
	// package does not know (a newer protocol version).
	Unknown bool
}

// Error returns "privval: protocol error: " and the reason.
func (e *ProtocolError) Error() string { return "privval: protocol error: " + e.Reason }

// Unwrap returns signer.ErrProtocol, and signer.ErrMessageTooLarge for a
// frame that is too large.
func (e *ProtocolError) Unwrap() []error {
	if e.TooLarge {
		return []error{signer.ErrProtocol, signer.ErrMessageTooLarge}
	}
	return []error{signer.ErrProtocol}
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
