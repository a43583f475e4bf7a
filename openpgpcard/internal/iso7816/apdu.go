// Package iso7816 is the ISO/IEC 7816-4 framing that package openpgpcard
// and its simulator share: command APDUs in their short and extended
// forms, status words, and BER-TLV data objects. Its decoders take any
// bytes and return a *FormatError for input that does not follow the
// framing; they never panic.
package iso7816

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrFormat is what every decoding error of this package wraps.
var ErrFormat = errors.New("iso7816: malformed")

// FormatError says what part of an APDU or TLV is malformed. It unwraps
// to ErrFormat.
type FormatError struct {
	What string
}

func (e *FormatError) Error() string { return "iso7816: malformed " + e.What }

// Unwrap returns ErrFormat.
func (e *FormatError) Unwrap() error { return ErrFormat }

func malformed(format string, args ...any) error {
	return &FormatError{What: fmt.Sprintf(format, args...)}
}

// Status words this module uses (ISO 7816-4 and the OpenPGP card
// specification v3.4, section 7.2).
const (
	SWOK                     = 0x9000
	SWMoreData               = 0x6100 // low byte: bytes still available
	SWWrongLength            = 0x6700
	SWLastCommandExpected    = 0x6883 // a chain ended early
	SWChainingUnsupported    = 0x6884
	SWSecurityNotSatisfied   = 0x6982
	SWAuthBlocked            = 0x6983
	SWConditionsNotSatisfied = 0x6985
	SWIncorrectData          = 0x6A80
	SWFuncNotSupported       = 0x6A81
	SWFileNotFound           = 0x6A82
	SWWrongP1P2              = 0x6B00
	SWReferencedDataNotFound = 0x6A88
	SWINSNotSupported        = 0x6D00
	SWCLANotSupported        = 0x6E00
	SWWrongLe                = 0x6C00 // low byte: the right Le
	SWPINRetries             = 0x63C0 // low nibble: tries left
)

// Command is a command APDU.
type Command struct {
	CLA, INS, P1, P2 byte
	Data             []byte
	// Le is the number of response bytes expected: 0 for none,
	// 256 or 65536 for "as many as there are" in the short and extended
	// forms.
	Le int
	// Extended says the APDU used (or is to use) the extended-length form.
	Extended bool
}

// Chained reports whether CLA's command-chaining bit (0x10) is set: more
// commands of the chain follow.
func (c Command) Chained() bool { return c.CLA&0x10 != 0 }

// ParseCommand decodes a command APDU in any of the four ISO cases, short
// or extended. The returned Data aliases b.
func ParseCommand(b []byte) (Command, error) {
	if len(b) < 4 {
		return Command{}, malformed("APDU: %d bytes, want at least 4", len(b))
	}
	c := Command{CLA: b[0], INS: b[1], P1: b[2], P2: b[3]}
	body := b[4:]
	switch {
	case len(body) == 0: // case 1
		return c, nil
	case len(body) == 1: // case 2 short
		c.Le = shortLe(body[0])
		return c, nil
	case body[0] != 0: // case 3 or 4 short
		lc := int(body[0])
		switch len(body) {
		case 1 + lc:
		case 2 + lc:
			c.Le = shortLe(body[1+lc])
		default:
			return Command{}, malformed("APDU: Lc %d with %d bytes after it", lc, len(body)-1)
		}
		c.Data = body[1 : 1+lc]
		return c, nil
	}
	// Extended: body[0] == 0.
	c.Extended = true
	if len(body) == 3 { // case 2 extended
		c.Le = extLe(body[1:3])
		return c, nil
	}
	if len(body) < 3 {
		return Command{}, malformed("APDU: %d-byte extended length field", len(body))
	}
	lc := int(binary.BigEndian.Uint16(body[1:3]))
	if lc == 0 {
		return Command{}, malformed("APDU: extended Lc of 0")
	}
	switch len(body) {
	case 3 + lc:
	case 5 + lc:
		c.Le = extLe(body[3+lc:])
	default:
		return Command{}, malformed("APDU: extended Lc %d with %d bytes after it", lc, len(body)-3)
	}
	c.Data = body[3 : 3+lc]
	return c, nil
}

func shortLe(b byte) int {
	if b == 0 {
		return 256
	}
	return int(b)
}

func extLe(b []byte) int {
	n := int(binary.BigEndian.Uint16(b))
	if n == 0 {
		return 65536
	}
	return n
}

// Bytes encodes c: in the short form when its data and Le fit and
// Extended is false, else in the extended form. It returns an error for
// data over 65535 bytes or an Le over 65536.
func (c Command) Bytes() ([]byte, error) {
	if len(c.Data) > 65535 || c.Le < 0 || c.Le > 65536 {
		return nil, malformed("APDU to encode: %d bytes of data, Le %d", len(c.Data), c.Le)
	}
	ext := c.Extended || len(c.Data) > 255 || c.Le > 256
	out := []byte{c.CLA, c.INS, c.P1, c.P2}
	if !ext {
		if len(c.Data) > 0 {
			out = append(out, byte(len(c.Data)))
			out = append(out, c.Data...)
		}
		if c.Le > 0 {
			out = append(out, byte(c.Le)) // 256 encodes as 0
		}
		return out, nil
	}
	out = append(out, 0)
	if len(c.Data) > 0 {
		out = binary.BigEndian.AppendUint16(out, uint16(len(c.Data)))
		out = append(out, c.Data...)
	}
	if c.Le > 0 {
		out = binary.BigEndian.AppendUint16(out, uint16(c.Le)) // 65536 encodes as 0
	}
	if len(c.Data) == 0 && c.Le == 0 {
		out = out[:4] // case 1 has no extended form
	}
	return out, nil
}

// SplitResponse returns a response APDU's data and status word.
func SplitResponse(b []byte) ([]byte, uint16, error) {
	if len(b) < 2 {
		return nil, 0, malformed("response: %d bytes, want at least the 2 of a status word", len(b))
	}
	n := len(b) - 2
	return b[:n], binary.BigEndian.Uint16(b[n:]), nil
}

// Response appends the status word sw to data.
func Response(data []byte, sw uint16) []byte {
	return binary.BigEndian.AppendUint16(append([]byte(nil), data...), sw)
}
