package ledger

import (
	"encoding/binary"
	"fmt"

	"github.com/signerkit/signerkit/signer"
)

// The validator app's class and instructions (docs/protocols.md A.2, A.3).
const (
	CLA             = 0x56
	INSGetVersion   = 0x00
	INSPublicKey    = 0x01
	INSSignEd25519  = 0x02
	MaxChunkSize    = 250 // the largest chunk this client sends (tmkms's choice; the APDU limit is 255)
	maxAPDUData     = 255
	maxPackets      = 255 // P2 is one byte
	publicKeySize   = 32
	signatureSize   = 64
	versionReplyLen = 4
)

// Status words the validator app and the device OS return (docs/protocols.md
// A.4).
const (
	SWOK                     = 0x9000
	SWWrongLength            = 0x6700
	SWEmptyBuffer            = 0x6982
	SWOutputBufferTooSmall   = 0x6983
	SWDataInvalid            = 0x6984
	SWConditionsNotSatisfied = 0x6985
	SWCommandNotAllowed      = 0x6986
	SWINSNotSupported        = 0x6D00
	SWCLANotSupported        = 0x6E00
	SWAppNotOpen             = 0x6E01 // what ledger-go's table calls it; some dashboards return it
	SWNoAppOpen              = 0x6511 // recent firmware's dashboard reply to an app APDU
	SWDeviceLocked           = 0x5515
)

// ParseError is the one-byte code the validator app returns with SW 0x6984
// when it cannot parse the sign bytes (app-tendermint src/lib/vote_parser.c).
type ParseError byte

// The parser's codes.
const (
	ParseUnexpectedBufferEnd  ParseError = 1
	ParseUnexpectedField      ParseError = 2
	ParseUnexpectedWireType   ParseError = 3
	ParseUnexpectedType       ParseError = 4
	ParseUnexpectedHeight     ParseError = 5 // also a round of 128-255, read as a negative int8
	ParseUnexpectedRound      ParseError = 6
	ParseUnexpectedBufferSize ParseError = 7 // a length prefix longer than one byte, among others
)

// String names the code as the app's source does.
func (p ParseError) String() string {
	switch p {
	case ParseUnexpectedBufferEnd:
		return "unexpected buffer end"
	case ParseUnexpectedField:
		return "unexpected field"
	case ParseUnexpectedWireType:
		return "unexpected wire type"
	case ParseUnexpectedType:
		return "unexpected type value"
	case ParseUnexpectedHeight:
		return "unexpected height or round value"
	case ParseUnexpectedRound:
		return "unexpected round value"
	case ParseUnexpectedBufferSize:
		return "unexpected buffer size"
	}
	return fmt.Sprintf("parse error %d", byte(p))
}

// StatusError is a status word other than 0x9000. It unwraps to the
// signer sentinel that fits: ErrRejected (0x6986, the user pressed Reject),
// ErrDoubleSign (0x6985), ErrInvalidMessage (0x6984, with ParseError set),
// ErrMessageTooLarge (0x6983), ErrAppNotOpen (0x6E00, 0x6E01, 0x6511),
// ErrDeviceLocked (0x5515), ErrUnsupported (0x6D00) and ErrProtocol for any
// other word.
type StatusError struct {
	SW  uint16
	INS byte // the instruction that was refused
	// ParseError is the app's parse-error code for SW 0x6984, or 0.
	ParseError ParseError
}

// Error names the instruction, the status word and what it means, and
// the parse error for 0x6984.
func (e *StatusError) Error() string {
	what := fmt.Sprintf("ledger: %s: status 0x%04X (%s)", insName(e.INS), e.SW, swText(e.SW))
	if e.ParseError != 0 {
		what += fmt.Sprintf(": parse error %d, %s", byte(e.ParseError), e.ParseError)
	}
	return what
}

// Unwrap returns the sentinel for the status word.
func (e *StatusError) Unwrap() error {
	switch e.SW {
	case SWCommandNotAllowed:
		return signer.ErrRejected
	case SWConditionsNotSatisfied:
		return signer.ErrDoubleSign
	case SWDataInvalid:
		return signer.ErrInvalidMessage
	case SWOutputBufferTooSmall:
		return signer.ErrMessageTooLarge
	case SWCLANotSupported, SWAppNotOpen, SWNoAppOpen:
		return signer.ErrAppNotOpen
	case SWDeviceLocked:
		return signer.ErrDeviceLocked
	case SWINSNotSupported:
		return signer.ErrUnsupported
	}
	return signer.ErrProtocol
}

func swText(sw uint16) string {
	switch sw {
	case SWWrongLength:
		return "wrong length"
	case SWEmptyBuffer:
		return "empty buffer"
	case SWOutputBufferTooSmall:
		return "sign bytes exceed the app's buffer"
	case SWDataInvalid:
		return "invalid sign bytes"
	case SWConditionsNotSatisfied:
		return "refused as a double sign"
	case SWCommandNotAllowed:
		return "rejected on the device"
	case SWINSNotSupported:
		return "instruction not supported"
	case SWCLANotSupported:
		return "class not supported: is the validator app open?"
	case SWAppNotOpen, SWNoAppOpen:
		return "app not open"
	case SWDeviceLocked:
		return "device locked: unlock it with its PIN"
	}
	return "unknown status"
}

func insName(ins byte) string {
	switch ins {
	case INSGetVersion:
		return "GET_VERSION"
	case INSPublicKey:
		return "PUBLIC_KEY_ED25519"
	case INSSignEd25519:
		return "SIGN_ED25519"
	}
	return fmt.Sprintf("INS 0x%02X", ins)
}

// Version is the validator app's version (GET_VERSION).
type Version struct {
	Testing             bool // MODE byte 0xFF: built with TESTING_ENABLED
	Major, Minor, Patch uint8
}

// String returns the version as x.y.z, marked when the app is a testing
// build.
func (v Version) String() string {
	s := fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
	if v.Testing {
		s += " (testing build)"
	}
	return s
}

// Less reports whether v is older than w (the testing flag aside).
func (v Version) Less(w Version) bool {
	if v.Major != w.Major {
		return v.Major < w.Major
	}
	if v.Minor != w.Minor {
		return v.Minor < w.Minor
	}
	return v.Patch < w.Patch
}

// command builds an APDU: CLA INS P1 P2 Lc data.
func command(ins, p1, p2 byte, data []byte) []byte {
	apdu := make([]byte, 5+len(data))
	apdu[0], apdu[1], apdu[2], apdu[3], apdu[4] = CLA, ins, p1, p2, byte(len(data))
	copy(apdu[5:], data)
	return apdu
}

// splitResponse splits data || SW1 SW2. A response too short to hold a
// status word is a protocol error.
func splitResponse(ins byte, resp []byte) ([]byte, error) {
	if len(resp) < 2 {
		return nil, fmt.Errorf("ledger: %s: %d-byte response has no status word: %w", insName(ins), len(resp), signer.ErrProtocol)
	}
	data, sw := resp[:len(resp)-2], binary.BigEndian.Uint16(resp[len(resp)-2:])
	if sw == SWOK {
		return data, nil
	}
	e := &StatusError{SW: sw, INS: ins}
	if sw == SWDataInvalid && len(data) == 1 {
		e.ParseError = ParseError(data[0])
	}
	return nil, e
}
