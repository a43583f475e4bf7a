package pkcs11

import (
	"fmt"
	"strings"

	p11 "github.com/miekg/pkcs11"

	"github.com/signerkit/signerkit/signer"
)

// Error is a PKCS#11 return value (CKR_…) other than CKR_OK, with the
// function that returned it. It unwraps to the signer sentinel that fits
// the code (see Unwrap), so callers branch with errors.Is whatever the
// token.
type Error struct {
	// Op is the PKCS#11 function that failed, e.g. "C_Sign".
	Op string
	// Code is the CK_RV the module returned.
	Code uint
}

// Error returns "pkcs11: " followed by the function and the code's name,
// e.g. "pkcs11: C_Sign: CKR_DEVICE_REMOVED" (a code without a name in hex).
func (e *Error) Error() string {
	return fmt.Sprintf("pkcs11: %s: %s", e.Op, codeName(e.Code))
}

// Unwrap returns the signer sentinel for e.Code:
//
//	CKR_SESSION_HANDLE_INVALID, CKR_SESSION_CLOSED        ErrSessionExpired
//	CKR_DEVICE_REMOVED, CKR_TOKEN_NOT_PRESENT             ErrDisconnected
//	CKR_PIN_INCORRECT, CKR_PIN_INVALID, CKR_PIN_LEN_RANGE ErrWrongPassphrase
//	CKR_PIN_LOCKED, CKR_PIN_EXPIRED                       ErrDeviceLocked
//	CKR_USER_NOT_LOGGED_IN, CKR_KEY_FUNCTION_NOT_PERMITTED,
//	CKR_TOKEN_WRITE_PROTECTED, CKR_SESSION_READ_ONLY      ErrPermissionDenied
//	CKR_MECHANISM_INVALID, CKR_FUNCTION_NOT_SUPPORTED …   ErrUnsupported
//	CKR_DATA_LEN_RANGE                                    ErrMessageTooLarge
//	CKR_DATA_INVALID                                      ErrInvalidMessage
//	CKR_KEY_HANDLE_INVALID, CKR_OBJECT_HANDLE_INVALID     ErrKeyNotFound
//	CKR_SESSION_COUNT                                     ErrBusy
//	CKR_SLOT_ID_INVALID                                   ErrDeviceNotFound
//	CKR_TEMPLATE_INCONSISTENT, CKR_ATTRIBUTE_VALUE_INVALID ErrInvalidArgument
//	CKR_CRYPTOKI_NOT_INITIALIZED                          ErrClosed
//	any other (CKR_GENERAL_ERROR, CKR_FUNCTION_FAILED,
//	CKR_ARGUMENTS_BAD, vendor codes …)                    ErrProtocol
//
// so every *Error wraps a sentinel, as other backends' device errors do.
func (e *Error) Unwrap() error {
	switch e.Code {
	case p11.CKR_SESSION_HANDLE_INVALID, p11.CKR_SESSION_CLOSED:
		return signer.ErrSessionExpired
	case p11.CKR_DEVICE_REMOVED, p11.CKR_TOKEN_NOT_PRESENT:
		return signer.ErrDisconnected
	case p11.CKR_PIN_INCORRECT, p11.CKR_PIN_INVALID, p11.CKR_PIN_LEN_RANGE:
		return signer.ErrWrongPassphrase
	case p11.CKR_PIN_LOCKED, p11.CKR_PIN_EXPIRED:
		return signer.ErrDeviceLocked
	case p11.CKR_USER_NOT_LOGGED_IN, p11.CKR_KEY_FUNCTION_NOT_PERMITTED,
		p11.CKR_TOKEN_WRITE_PROTECTED, p11.CKR_SESSION_READ_ONLY:
		return signer.ErrPermissionDenied
	case p11.CKR_MECHANISM_INVALID, p11.CKR_MECHANISM_PARAM_INVALID, p11.CKR_FUNCTION_NOT_SUPPORTED,
		p11.CKR_KEY_TYPE_INCONSISTENT, p11.CKR_KEY_SIZE_RANGE, p11.CKR_DOMAIN_PARAMS_INVALID,
		p11.CKR_CURVE_NOT_SUPPORTED:
		return signer.ErrUnsupported
	case p11.CKR_DATA_LEN_RANGE:
		return signer.ErrMessageTooLarge
	case p11.CKR_DATA_INVALID:
		return signer.ErrInvalidMessage
	case p11.CKR_KEY_HANDLE_INVALID, p11.CKR_OBJECT_HANDLE_INVALID:
		return signer.ErrKeyNotFound
	case p11.CKR_SESSION_COUNT:
		return signer.ErrBusy
	case p11.CKR_SLOT_ID_INVALID:
		return signer.ErrDeviceNotFound
	case p11.CKR_TEMPLATE_INCONSISTENT, p11.CKR_TEMPLATE_INCOMPLETE, p11.CKR_ATTRIBUTE_VALUE_INVALID,
		p11.CKR_ATTRIBUTE_TYPE_INVALID:
		return signer.ErrInvalidArgument
	case p11.CKR_CRYPTOKI_NOT_INITIALIZED:
		return signer.ErrClosed
	}
	return signer.ErrProtocol
}

// unprefixed returns err's message without this package's prefix, for an
// error of this package quoted inside another, which has the prefix
// already.
func unprefixed(err error) string { return strings.TrimPrefix(err.Error(), "pkcs11: ") }

// sessionDead reports whether code means the session can no longer be
// used: the pool drops it (and every idle session with it) and the sign is
// retried on a new one.
func sessionDead(code uint) bool {
	switch code {
	case p11.CKR_SESSION_HANDLE_INVALID, p11.CKR_SESSION_CLOSED,
		p11.CKR_DEVICE_REMOVED, p11.CKR_TOKEN_NOT_PRESENT:
		return true
	}
	return false
}

// PINError is a PIN the token refused. It unwraps to
// signer.ErrWrongPassphrase. The pool that got it logs in no more (a
// token locks its PIN after a few failures): reopen the token with the
// right PIN. The PIN itself is never part of the error.
type PINError struct {
	// Code is the CK_RV of C_Login: CKR_PIN_INCORRECT, CKR_PIN_INVALID or
	// CKR_PIN_LEN_RANGE.
	Code uint
	// Token is the label of the token that refused it.
	Token string
}

// Error names the token and the code, never the PIN.
func (e *PINError) Error() string {
	return fmt.Sprintf("pkcs11: token %q refused the PIN (%s)", e.Token, codeName(e.Code))
}

// Unwrap returns signer.ErrWrongPassphrase.
func (e *PINError) Unwrap() error { return signer.ErrWrongPassphrase }

// pinRefused reports whether a C_Login code means the PIN was wrong.
func pinRefused(code uint) bool {
	return code == p11.CKR_PIN_INCORRECT || code == p11.CKR_PIN_INVALID || code == p11.CKR_PIN_LEN_RANGE
}

// codeNames names the codes this package acts on or users are likely to
// meet; others print in hex.
var codeNames = map[uint]string{
	p11.CKR_CANCEL:                       "CKR_CANCEL",
	p11.CKR_HOST_MEMORY:                  "CKR_HOST_MEMORY",
	p11.CKR_SLOT_ID_INVALID:              "CKR_SLOT_ID_INVALID",
	p11.CKR_GENERAL_ERROR:                "CKR_GENERAL_ERROR",
	p11.CKR_FUNCTION_FAILED:              "CKR_FUNCTION_FAILED",
	p11.CKR_ARGUMENTS_BAD:                "CKR_ARGUMENTS_BAD",
	p11.CKR_ATTRIBUTE_READ_ONLY:          "CKR_ATTRIBUTE_READ_ONLY",
	p11.CKR_ATTRIBUTE_SENSITIVE:          "CKR_ATTRIBUTE_SENSITIVE",
	p11.CKR_ATTRIBUTE_TYPE_INVALID:       "CKR_ATTRIBUTE_TYPE_INVALID",
	p11.CKR_ATTRIBUTE_VALUE_INVALID:      "CKR_ATTRIBUTE_VALUE_INVALID",
	p11.CKR_DATA_INVALID:                 "CKR_DATA_INVALID",
	p11.CKR_DATA_LEN_RANGE:               "CKR_DATA_LEN_RANGE",
	p11.CKR_DEVICE_ERROR:                 "CKR_DEVICE_ERROR",
	p11.CKR_DEVICE_MEMORY:                "CKR_DEVICE_MEMORY",
	p11.CKR_DEVICE_REMOVED:               "CKR_DEVICE_REMOVED",
	p11.CKR_FUNCTION_CANCELED:            "CKR_FUNCTION_CANCELED",
	p11.CKR_FUNCTION_NOT_SUPPORTED:       "CKR_FUNCTION_NOT_SUPPORTED",
	p11.CKR_KEY_HANDLE_INVALID:           "CKR_KEY_HANDLE_INVALID",
	p11.CKR_KEY_SIZE_RANGE:               "CKR_KEY_SIZE_RANGE",
	p11.CKR_KEY_TYPE_INCONSISTENT:        "CKR_KEY_TYPE_INCONSISTENT",
	p11.CKR_KEY_FUNCTION_NOT_PERMITTED:   "CKR_KEY_FUNCTION_NOT_PERMITTED",
	p11.CKR_MECHANISM_INVALID:            "CKR_MECHANISM_INVALID",
	p11.CKR_MECHANISM_PARAM_INVALID:      "CKR_MECHANISM_PARAM_INVALID",
	p11.CKR_OBJECT_HANDLE_INVALID:        "CKR_OBJECT_HANDLE_INVALID",
	p11.CKR_OPERATION_ACTIVE:             "CKR_OPERATION_ACTIVE",
	p11.CKR_OPERATION_NOT_INITIALIZED:    "CKR_OPERATION_NOT_INITIALIZED",
	p11.CKR_PIN_INCORRECT:                "CKR_PIN_INCORRECT",
	p11.CKR_PIN_INVALID:                  "CKR_PIN_INVALID",
	p11.CKR_PIN_LEN_RANGE:                "CKR_PIN_LEN_RANGE",
	p11.CKR_PIN_EXPIRED:                  "CKR_PIN_EXPIRED",
	p11.CKR_PIN_LOCKED:                   "CKR_PIN_LOCKED",
	p11.CKR_SESSION_CLOSED:               "CKR_SESSION_CLOSED",
	p11.CKR_SESSION_COUNT:                "CKR_SESSION_COUNT",
	p11.CKR_SESSION_HANDLE_INVALID:       "CKR_SESSION_HANDLE_INVALID",
	p11.CKR_SESSION_READ_ONLY:            "CKR_SESSION_READ_ONLY",
	p11.CKR_TEMPLATE_INCOMPLETE:          "CKR_TEMPLATE_INCOMPLETE",
	p11.CKR_TEMPLATE_INCONSISTENT:        "CKR_TEMPLATE_INCONSISTENT",
	p11.CKR_TOKEN_NOT_PRESENT:            "CKR_TOKEN_NOT_PRESENT",
	p11.CKR_TOKEN_NOT_RECOGNIZED:         "CKR_TOKEN_NOT_RECOGNIZED",
	p11.CKR_TOKEN_WRITE_PROTECTED:        "CKR_TOKEN_WRITE_PROTECTED",
	p11.CKR_USER_ALREADY_LOGGED_IN:       "CKR_USER_ALREADY_LOGGED_IN",
	p11.CKR_USER_NOT_LOGGED_IN:           "CKR_USER_NOT_LOGGED_IN",
	p11.CKR_USER_PIN_NOT_INITIALIZED:     "CKR_USER_PIN_NOT_INITIALIZED",
	p11.CKR_USER_TYPE_INVALID:            "CKR_USER_TYPE_INVALID",
	p11.CKR_DOMAIN_PARAMS_INVALID:        "CKR_DOMAIN_PARAMS_INVALID",
	p11.CKR_CURVE_NOT_SUPPORTED:          "CKR_CURVE_NOT_SUPPORTED",
	p11.CKR_BUFFER_TOO_SMALL:             "CKR_BUFFER_TOO_SMALL",
	p11.CKR_CRYPTOKI_NOT_INITIALIZED:     "CKR_CRYPTOKI_NOT_INITIALIZED",
	p11.CKR_CRYPTOKI_ALREADY_INITIALIZED: "CKR_CRYPTOKI_ALREADY_INITIALIZED",
}

func codeName(code uint) string {
	if n, ok := codeNames[code]; ok {
		return n
	}
	return fmt.Sprintf("CK_RV 0x%08X", code)
}
