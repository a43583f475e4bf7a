package yubihsm

import (
	"errors"
	"fmt"

	"github.com/certusone/yubihsm-go/commands"

	"github.com/signerkit/signerkit/signer"
)

// Device error codes (protocols.md B.1).
const (
	CodeInvalidCommand    = 0x01
	CodeInvalidData       = 0x02
	CodeInvalidSession    = 0x03
	CodeAuthFailed        = 0x04
	CodeSessionsFull      = 0x05
	CodeSessionFailed     = 0x06
	CodeStorageFailed     = 0x07
	CodeWrongLength       = 0x08
	CodeInsufficientPerms = 0x09
	CodeLogFull           = 0x0a
	CodeObjectNotFound    = 0x0b
	CodeInvalidID         = 0x0c
	CodeSSHCAConstraint   = 0x0e
	CodeInvalidOTP        = 0x0f
	CodeDemoMode          = 0x10
	CodeObjectExists      = 0x11
	CodeAlgorithmDisabled = 0x12
	CodeCommandUnexecuted = 0xff
)

var codeNames = map[byte]string{
	CodeInvalidCommand:    "INVALID COMMAND",
	CodeInvalidData:       "INVALID DATA",
	CodeInvalidSession:    "INVALID SESSION",
	CodeAuthFailed:        "AUTHENTICATION FAILED",
	CodeSessionsFull:      "SESSIONS FULL",
	CodeSessionFailed:     "SESSION FAILED",
	CodeStorageFailed:     "STORAGE FAILED",
	CodeWrongLength:       "WRONG LENGTH",
	CodeInsufficientPerms: "INSUFFICIENT PERMISSIONS",
	CodeLogFull:           "LOG FULL",
	CodeObjectNotFound:    "OBJECT NOT FOUND",
	CodeInvalidID:         "INVALID ID",
	CodeSSHCAConstraint:   "SSH CA CONSTRAINT VIOLATION",
	CodeInvalidOTP:        "INVALID OTP",
	CodeDemoMode:          "DEMO MODE",
	CodeObjectExists:      "OBJECT EXISTS",
	CodeAlgorithmDisabled: "ALGORITHM DISABLED",
	CodeCommandUnexecuted: "COMMAND UNEXECUTED",
}

var codeSentinels = map[byte]error{
	CodeInvalidCommand:    signer.ErrUnsupported,
	CodeInvalidData:       signer.ErrInvalidArgument,
	CodeInvalidSession:    signer.ErrSessionExpired,
	CodeAuthFailed:        signer.ErrWrongPassphrase,
	CodeSessionsFull:      signer.ErrBusy,
	CodeSessionFailed:     signer.ErrSessionExpired,
	CodeStorageFailed:     signer.ErrCorrupt,
	CodeWrongLength:       signer.ErrInvalidMessage,
	CodeInsufficientPerms: signer.ErrPermissionDenied,
	CodeLogFull:           signer.ErrBusy,
	CodeObjectNotFound:    signer.ErrKeyNotFound,
	CodeInvalidID:         signer.ErrInvalidArgument,
	CodeSSHCAConstraint:   signer.ErrPermissionDenied,
	CodeInvalidOTP:        signer.ErrInvalidArgument,
	CodeDemoMode:          signer.ErrUnsupported,
	CodeObjectExists:      signer.ErrKeyExists,
	CodeAlgorithmDisabled: signer.ErrUnsupported,
	CodeCommandUnexecuted: signer.ErrProtocol,
}

// DeviceError is an error code the device answered with. It unwraps to
// the signer sentinel that fits the code: INVALID SESSION to
// ErrSessionExpired, AUTHENTICATION FAILED to ErrWrongPassphrase, SESSIONS
// FULL to ErrBusy, INSUFFICIENT PERMISSIONS to ErrPermissionDenied, OBJECT
// NOT FOUND to ErrKeyNotFound, OBJECT EXISTS to ErrKeyExists, WRONG LENGTH
// to ErrInvalidMessage, INVALID COMMAND and DEMO MODE to ErrUnsupported,
// and so on.
type DeviceError struct {
	// Code is the device's error code (protocols.md B.1).
	Code byte
	// Command is the command that was refused (the inner command for a
	// refusal inside a session).
	Command byte
	// Session says whether the refusal came encrypted inside a session
	// (false: the device refused the outer frame, as it does for an
	// expired session or a bad MAC).
	Session bool
}

// Name returns the code's name, e.g. "OBJECT NOT FOUND".
func (e *DeviceError) Name() string {
	if n, ok := codeNames[e.Code]; ok {
		return n
	}
	return fmt.Sprintf("unknown error 0x%02x", e.Code)
}

func (e *DeviceError) Error() string {
	return fmt.Sprintf("yubihsm: device refused command 0x%02x: %s (0x%02x)", e.Command, e.Name(), e.Code)
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
		return &DeviceError{Code: byte(ce.Code), Command: cmd, Session: true}
	}
	return err
}

// isCode reports whether err is a DeviceError with one of the codes.
func isCode(err error, codes ...byte) bool {
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
