package openpgpcard

import (
	"context"
	"errors"
	"fmt"

	"github.com/signerkit/signerkit/openpgpcard/internal/iso7816"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// StatusError is a command the card refused: its status word other than
// 0x9000. It unwraps to the signer sentinel that fits: 63Cx (a wrong PIN,
// x tries left) to signer.ErrWrongPassphrase; 6983 (the PIN blocked) to
// signer.ErrDeviceLocked; 6982 and 6985 (not verified, conditions not met)
// to signer.ErrPermissionDenied; 6A88 (no such key or data object) to
// signer.ErrKeyNotFound; 6A80 and 6700 (data or length refused) to
// signer.ErrInvalidMessage; 6D00, 6E00 and 6A81 (not supported) to
// signer.ErrUnsupported; anything else to signer.ErrProtocol.
type StatusError struct {
	// Command names the command, such as "PSO:CDS".
	Command string
	// SW is the status word.
	SW uint16
}

func (e *StatusError) Error() string {
	what := ""
	switch {
	case e.SW&0xFFF0 == iso7816.SWPINRetries:
		what = fmt.Sprintf(" (wrong PIN, %d tries left)", e.SW&0x0F)
	case e.SW == iso7816.SWAuthBlocked:
		what = " (PIN blocked)"
	case e.SW == iso7816.SWSecurityNotSatisfied:
		what = " (PIN not verified)"
	case e.SW == iso7816.SWReferencedDataNotFound:
		what = " (no such key or data object)"
	case e.SW == iso7816.SWIncorrectData:
		what = " (data refused)"
	}
	return fmt.Sprintf("openpgpcard: %s: status %04x%s", e.Command, e.SW, what)
}

// Unwrap returns the signer sentinel the status word means.
func (e *StatusError) Unwrap() error {
	switch {
	case e.SW&0xFFF0 == iso7816.SWPINRetries:
		return signer.ErrWrongPassphrase
	}
	switch e.SW {
	case iso7816.SWAuthBlocked:
		return signer.ErrDeviceLocked
	case iso7816.SWSecurityNotSatisfied, iso7816.SWConditionsNotSatisfied:
		return signer.ErrPermissionDenied
	case iso7816.SWReferencedDataNotFound:
		return signer.ErrKeyNotFound
	case iso7816.SWIncorrectData, iso7816.SWWrongLength:
		return signer.ErrInvalidMessage
	case iso7816.SWINSNotSupported, iso7816.SWCLANotSupported, iso7816.SWFuncNotSupported:
		return signer.ErrUnsupported
	}
	return signer.ErrProtocol
}

// TriesLeft returns the tries a 63Cx status word reports, or -1.
func (e *StatusError) TriesLeft() int {
	if e.SW&0xFFF0 == iso7816.SWPINRetries {
		return int(e.SW & 0x0F)
	}
	return -1
}

// link is one transport with what the card said it can take.
type link struct {
	tr       Transport
	extended bool // extended Lc/Le (historical bytes and 7F66)
	chaining bool // command chaining
	maxCmd   int  // longest command data in one APDU
}

// maxGetResponse bounds the GET RESPONSE loop: 64 KiB in 256-byte parts.
const maxGetResponse = 257

// transmit sends cmd, chaining it when its data is longer than one APDU
// takes, and gathers a long response with GET RESPONSE. It returns the
// response data of a 9000, a *StatusError, or a transport error.
func (l *link) transmit(ctx context.Context, name string, cmd iso7816.Command) ([]byte, error) {
	if cmd.Le == 0 {
		cmd.Le = 256
		if l.extended {
			cmd.Le = 65536
		}
	}
	cmd.Extended = l.extended && (len(cmd.Data) > 255 || cmd.Le > 256)
	per := 255
	if l.extended {
		per = l.maxCmd
	}
	data := cmd.Data
	for len(data) > per {
		if !l.chaining {
			return nil, fmt.Errorf("openpgpcard: %s: %d bytes of data, and the card takes %d without chaining: %w", name, len(cmd.Data), per, signer.ErrMessageTooLarge)
		}
		part := cmd
		part.CLA |= 0x10
		part.Data, part.Le = data[:per], 0
		part.Extended = cmd.Extended && per > 255
		if _, err := l.exchange(ctx, name, part); err != nil {
			return nil, err
		}
		data = data[per:]
	}
	cmd.Data = data
	return l.exchange(ctx, name, cmd)
}

// exchange sends one APDU and follows 61xx with GET RESPONSE.
func (l *link) exchange(ctx context.Context, name string, cmd iso7816.Command) ([]byte, error) {
	apdu, err := cmd.Bytes()
	if err != nil {
		return nil, fmt.Errorf("openpgpcard: %s: %w", name, signer.ErrInvalidMessage)
	}
	var out []byte
	for range maxGetResponse {
		resp, err := l.roundTrip(ctx, name, apdu)
		if err != nil {
			return nil, err
		}
		data, sw, err := iso7816.SplitResponse(resp)
		if err != nil {
			return nil, fmt.Errorf("openpgpcard: %s: %w: %w", name, err, signer.ErrProtocol)
		}
		out = append(out, data...)
		switch {
		case sw == iso7816.SWOK:
			return out, nil
		case sw&0xFF00 == iso7816.SWMoreData:
			le := int(sw & 0xFF)
			if le == 0 {
				le = 256
			}
			apdu, _ = iso7816.Command{INS: 0xC0, Le: le}.Bytes()
		default:
			return nil, &StatusError{Command: name, SW: sw}
		}
	}
	return nil, fmt.Errorf("openpgpcard: %s: more than %d GET RESPONSE parts: %w", name, maxGetResponse, signer.ErrProtocol)
}

// roundTrip is one APDU on the transport, traced.
func (l *link) roundTrip(ctx context.Context, name string, apdu []byte) ([]byte, error) {
	trace := signertrace.ContextTrace(ctx)
	trace.Add(signertrace.CountAPDUs, 1)
	trace.Add(signertrace.CountRoundTrips, 1)
	trace.Add(signertrace.CountBytesOut, int64(len(apdu)))
	start := trace.Start()
	resp, err := l.tr.Exchange(ctx, apdu)
	trace.Measured(signertrace.StageTransport, start)
	if err != nil {
		return nil, wrapTransport(name, err)
	}
	trace.Add(signertrace.CountBytesIn, int64(len(resp)))
	return resp, nil
}

// transportError is a transport's failure during a command: the link is
// dropped after it.
type transportError struct {
	name string
	err  error
}

func (e *transportError) Error() string {
	return fmt.Sprintf("openpgpcard: %s: %v", e.name, trimPrefix(e.err.Error()))
}
func (e *transportError) Unwrap() error { return e.err }

func wrapTransport(name string, err error) error { return &transportError{name: name, err: err} }

func isTransportError(err error) bool {
	var te *transportError
	return errors.As(err, &te)
}
