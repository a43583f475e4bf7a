package yubihsm

import (
	"errors"
	"fmt"
	"strings"

	"github.com/certusone/yubihsm-go/commands"

	"github.com/signerkit/signerkit/signer"
)

// ErrorCode is an error code the device answers with (docs/protocols.md B.1),
// in an error frame (0x7f) instead of a command's response.
type ErrorCode uint8

// The device's error codes, named as Yubico's documentation and
// yubihsm-shell name them (YHR_DEVICE_OBJECT_NOT_FOUND is
// CodeObjectNotFound).
const (
	CodeInvalidCommand           ErrorCode = 0x01
	CodeInvalidData              ErrorCode = 0x02
	CodeInvalidSession           ErrorCode = 0x03
	CodeAuthenticationFailed     ErrorCode = 0x04
	CodeSessionsFull             ErrorCode = 0x05
	CodeSessionFailed            ErrorCode = 0x06
	CodeStorageFailed            ErrorCode = 0x07
	CodeWrongLength              ErrorCode = 0x08
	CodeInsufficientPermissions  ErrorCode = 0x09
	CodeLogFull                  ErrorCode = 0x0a
	CodeObjectNotFound           ErrorCode = 0x0b
	CodeInvalidID                ErrorCode = 0x0c
	CodeSSHCAConstraintViolation ErrorCode = 0x0e
	CodeInvalidOTP               ErrorCode = 0x0f
	CodeDemoMode                 ErrorCode = 0x10
	CodeObjectExists             ErrorCode = 0x11
	CodeAlgorithmDisabled        ErrorCode = 0x12
	CodeCommandUnexecuted        ErrorCode = 0xff
)

var codeNames = map[ErrorCode]string{
	CodeInvalidCommand:           "INVALID COMMAND",
	CodeInvalidData:              "INVALID DATA",
	CodeInvalidSession:           "INVALID SESSION",
	CodeAuthenticationFailed:     "AUTHENTICATION FAILED",
	CodeSessionsFull:             "SESSIONS FULL",
	CodeSessionFailed:            "SESSION FAILED",
	CodeStorageFailed:            "STORAGE FAILED",
	CodeWrongLength:              "WRONG LENGTH",
	CodeInsufficientPermissions:  "INSUFFICIENT PERMISSIONS",
	CodeLogFull:                  "LOG FULL",
	CodeObjectNotFound:           "OBJECT NOT FOUND",
	CodeInvalidID:                "INVALID ID",
	CodeSSHCAConstraintViolation: "SSH CA CONSTRAINT VIOLATION",
	CodeInvalidOTP:               "INVALID OTP",
	CodeDemoMode:                 "DEMO MODE",
	CodeObjectExists:             "OBJECT EXISTS",
	CodeAlgorithmDisabled:        "ALGORITHM DISABLED",
	CodeCommandUnexecuted:        "COMMAND UNEXECUTED",
}

var codeSentinels = map[ErrorCode]error{
	CodeInvalidCommand:           signer.ErrUnsupported,
	CodeInvalidData:              signer.ErrInvalidArgument,
	CodeInvalidSession:           signer.ErrSessionExpired,
	CodeAuthenticationFailed:     signer.ErrWrongPassphrase,
	CodeSessionsFull:             signer.ErrBusy,
	CodeSessionFailed:            signer.ErrSessionExpired,
	CodeStorageFailed:            signer.ErrCorrupt,
	CodeWrongLength:              signer.ErrInvalidMessage,
	CodeInsufficientPermissions:  signer.ErrPermissionDenied,
	CodeLogFull:                  signer.ErrBusy,
	CodeObjectNotFound:           signer.ErrKeyNotFound,
	CodeInvalidID:                signer.ErrInvalidArgument,
	CodeSSHCAConstraintViolation: signer.ErrPermissionDenied,
	CodeInvalidOTP:               signer.ErrInvalidArgument,
	CodeDemoMode:                 signer.ErrUnsupported,
	CodeObjectExists:             signer.ErrKeyExists,
	CodeAlgorithmDisabled:        signer.ErrUnsupported,
	CodeCommandUnexecuted:        signer.ErrProtocol,
}

// String returns the code's name as the device's documentation writes it,
// such as "OBJECT NOT FOUND", or "ErrorCode(0x42)" for a code it does not
// define.
func (c ErrorCode) String() string {
	if n, ok := codeNames[c]; ok {
		return n
	}
	return fmt.Sprintf("ErrorCode(0x%02x)", uint8(c))
}

// DeviceError is an error code the device answered with. It unwraps to
// the signer sentinel that fits the code: INVALID SESSION to
// ErrSessionExpired, AUTHENTICATION FAILED to ErrWrongPassphrase, SESSIONS
// FULL to ErrBusy, INSUFFICIENT PERMISSIONS to ErrPermissionDenied, OBJECT
// NOT FOUND to ErrKeyNotFound, OBJECT EXISTS to ErrKeyExists, WRONG LENGTH
// to ErrInvalidMessage, INVALID COMMAND and DEMO MODE to ErrUnsupported,
// and so on.
type DeviceError struct {
	// Code is the device's error code.
	Code ErrorCode
	// Command is the code of the command that was refused (the inner
	// command for a refusal inside a session).
	Command byte
	// Session says whether the refusal came encrypted inside a session
	// (false: the device refused the outer frame, as it does for an
	// expired session or a bad MAC).
	Session bool
}

// Error describes the refusal, e.g. "yubihsm: device refused command
// 0x6a: OBJECT NOT FOUND (0x0b)".
func (e *DeviceError) Error() string {
	if _, ok := codeNames[e.Code]; !ok {
		return fmt.Sprintf("yubihsm: device refused command 0x%02x: unknown error code 0x%02x", e.Command, uint8(e.Code))
	}
	return fmt.Sprintf("yubihsm: device refused command 0x%02x: %v (0x%02x)", e.Command, e.Code, uint8(e.Code))
}

// Unwrap returns the signer sentinel for the code (signer.ErrProtocol for
// codes it does not know).
func (e *DeviceError) Unwrap() error {
	if s, ok := codeSentinels[e.Code]; ok {
		return s
	}
	return signer.ErrProtocol
}

// deviceError converts the error type of yubihsm-go's response parser.
func deviceError(err error, cmd byte) error {
	var ce *commands.Error
	if errors.As(err, &ce) {
		return &DeviceError{Code: ErrorCode(ce.Code), Command: cmd, Session: true}
	}
	return err
}

// isCode reports whether err is a DeviceError with one of the codes.
func isCode(err error, codes ...ErrorCode) bool {
	var de *DeviceError
	if !errors.As(err, &de) {
		return false
	}
	for _, c := range codes {
		if de.Code == c {
			return true
		}
	}
	return false
}

// prefix starts every error message of the package, once.
const prefix = "yubihsm: "

// wrapError adds what was being done to an error that may already be this
// package's (a *DeviceError, a transport or protocol error, an error from a
// lower layer that added context of its own): its message is the prefix,
// the context, and the wrapped message without its prefix, so that the
// prefix appears once however deep errors nest.
type wrapError struct {
	context string
	err     error
}

func (e *wrapError) Error() string {
	return prefix + e.context + ": " + strings.TrimPrefix(e.err.Error(), prefix)
}

func (e *wrapError) Unwrap() error { return e.err }

// wrap returns err with the context format describes; see wrapError.
func wrap(err error, format string, args ...any) error {
	return &wrapError{context: fmt.Sprintf(format, args...), err: err}
}
