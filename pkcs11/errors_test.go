package pkcs11_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	p11 "github.com/miekg/pkcs11"

	"github.com/signerkit/signerkit/pkcs11"
	"github.com/signerkit/signerkit/signer"
)

func TestErrorUnwrap(t *testing.T) {
	for code, want := range map[uint]error{
		p11.CKR_SESSION_HANDLE_INVALID:     signer.ErrSessionExpired,
		p11.CKR_SESSION_CLOSED:             signer.ErrSessionExpired,
		p11.CKR_DEVICE_REMOVED:             signer.ErrDisconnected,
		p11.CKR_TOKEN_NOT_PRESENT:          signer.ErrDisconnected,
		p11.CKR_PIN_INCORRECT:              signer.ErrWrongPassphrase,
		p11.CKR_PIN_LOCKED:                 signer.ErrDeviceLocked,
		p11.CKR_USER_NOT_LOGGED_IN:         signer.ErrPermissionDenied,
		p11.CKR_KEY_FUNCTION_NOT_PERMITTED: signer.ErrPermissionDenied,
		p11.CKR_MECHANISM_INVALID:          signer.ErrUnsupported,
		p11.CKR_DATA_LEN_RANGE:             signer.ErrMessageTooLarge,
		p11.CKR_KEY_HANDLE_INVALID:         signer.ErrKeyNotFound,
		p11.CKR_SESSION_COUNT:              signer.ErrBusy,
		p11.CKR_SLOT_ID_INVALID:            signer.ErrDeviceNotFound,
		p11.CKR_CRYPTOKI_NOT_INITIALIZED:   signer.ErrClosed,
	} {
		err := error(&pkcs11.Error{Op: "C_Sign", Code: code})
		if !errors.Is(err, want) {
			t.Errorf("%v does not wrap %v", err, want)
		}
		if errors.Is(err, signer.ErrProtocol) {
			t.Errorf("%v wraps ErrProtocol, a code with a sentinel of its own", err)
		}
		if !strings.HasPrefix(err.Error(), "pkcs11: C_Sign: CKR_") {
			t.Errorf("Error() = %q", err)
		}
	}
	pe := &pkcs11.PINError{Code: p11.CKR_PIN_INCORRECT, Token: "t"}
	if !errors.Is(pe, signer.ErrWrongPassphrase) {
		t.Errorf("%v does not wrap ErrWrongPassphrase", pe)
	}
}

// TestErrorUnwrapUnknown: a code with no sentinel of its own unwraps to
// signer.ErrProtocol, as other backends' unexpected device answers do, so
// that every *Error wraps a sentinel.
func TestErrorUnwrapUnknown(t *testing.T) {
	for _, code := range []uint{p11.CKR_GENERAL_ERROR, p11.CKR_FUNCTION_FAILED, p11.CKR_ARGUMENTS_BAD, p11.CKR_DEVICE_ERROR, 0x80000001} {
		perr := &pkcs11.Error{Op: "C_Sign", Code: code}
		if got := perr.Unwrap(); got != signer.ErrProtocol {
			t.Errorf("%v unwraps to %v, want ErrProtocol", perr, got)
		}
		// Wrapped further, as callers see it.
		err := fmt.Errorf("signing vote: %w", perr)
		if !errors.Is(err, signer.ErrProtocol) {
			t.Errorf("%v does not wrap ErrProtocol", err)
		}
		var back *pkcs11.Error
		if !errors.As(err, &back) || back.Code != code {
			t.Errorf("%v: errors.As gives %v, want the *Error with code %#x", err, back, code)
		}
		if strings.Count(err.Error(), "pkcs11:") != 1 {
			t.Errorf("%q repeats the package prefix", err)
		}
	}
	if err := (&pkcs11.Error{Op: "C_Sign", Code: 0x80000001}); !strings.Contains(err.Error(), "0x80000001") {
		t.Errorf("a vendor code prints as %q, without its value", err)
	}
}

func TestSessionDead(t *testing.T) {
	for _, code := range []uint{p11.CKR_SESSION_HANDLE_INVALID, p11.CKR_SESSION_CLOSED, p11.CKR_DEVICE_REMOVED, p11.CKR_TOKEN_NOT_PRESENT} {
		if !pkcs11.SessionDead(code) {
			t.Errorf("%#x does not evict the session", code)
		}
	}
	for _, code := range []uint{p11.CKR_OK, p11.CKR_PIN_INCORRECT, p11.CKR_USER_NOT_LOGGED_IN, p11.CKR_DATA_LEN_RANGE, p11.CKR_GENERAL_ERROR} {
		if pkcs11.SessionDead(code) {
			t.Errorf("%#x evicts the session", code)
		}
	}
}
