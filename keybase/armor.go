package keybase

import (
	"bytes"
	"encoding/base64"
	"fmt"

	"github.com/signerkit/signerkit/signer"
)

// The OpenPGP-style ASCII armor (RFC 4880 §6.2) that gnokey wraps its keys
// in, written byte for byte as golang.org/x/crypto/openpgp/armor writes it:
//
//	-----BEGIN <type>-----
//	<key>: <value>            (zero or more headers)
//	                          (a blank line)
//	<base64, 64 characters a line>
//	=<base64 of the CRC-24 of the data>
//	-----END <type>-----      (no newline after it)

const (
	blockPrivate = "TENDERMINT PRIVATE KEY"
	blockPublic  = "TENDERMINT PUBLIC KEY"

	armorBegin = "-----BEGIN "
	armorEnd   = "-----END "
	armorDash  = "-----"
	lineLength = 64

	// maxArmor bounds what the reader takes: a key's armor is under 1 KiB.
	maxArmor = 64 << 10
	// maxLine bounds a line of base64 (RFC 4880 says 76; the upstream
	// reader takes 96).
	maxLine = 96
	// maxHeaders bounds a block's headers: gnokey writes at most two (kdf
	// and salt; type and version in a public key block), this package a
	// third (cost). More is refused as ArmorTooLarge, which also keeps
	// the check for a header given twice cheap.
	maxHeaders = 8
)

// ArmorProblem says what is wrong with armor that ArmorError reports.
type ArmorProblem uint8

// The problems an armor reader finds.
const (
	// ArmorNoBlock: no "-----BEGIN …-----" line.
	ArmorNoBlock ArmorProblem = iota + 1
	// ArmorTruncated: the input ends before the "-----END …-----" line.
	ArmorTruncated
	// ArmorBadHeader: a header line that is not "Key: Value", or a header
	// given twice.
	ArmorBadHeader
	// ArmorUnknownHeader: a header the block type does not have.
	ArmorUnknownHeader
	// ArmorBadBase64: the body is not valid base64.
	ArmorBadBase64
	// ArmorNoChecksum: the "=XXXX" CRC-24 line is missing or malformed.
	ArmorNoChecksum
	// ArmorBadChecksum: the CRC-24 does not match the data.
	ArmorBadChecksum
	// ArmorBadEnd: the END line names another block type, or text follows
	// the checksum where the END line should be.
	ArmorBadEnd
	// ArmorBlockType: a block of another type than the one expected (a
	// public key where a private key should be).
	ArmorBlockType
	// ArmorUnknownKDF: a kdf header other than "bcrypt".
	ArmorUnknownKDF
	// ArmorBadSalt: the salt header is missing or not 16 bytes of hex.
	ArmorBadSalt
	// ArmorBadCost: the cost header is not a cost this package reads
	// (MinCost to MaxCost).
	ArmorBadCost
	// ArmorTooLarge: more input than any key takes: over 64 KiB, or a
	// block with more than 8 headers.
	ArmorTooLarge
	// ArmorBadPayload: the data inside is not what the block type holds
	// (a ciphertext too short, malformed key bytes).
	ArmorBadPayload
	// ArmorTrailingData: text after the last block that belongs to no
	// block.
	ArmorTrailingData
)

var problemText = map[ArmorProblem]string{
	ArmorNoBlock:       "no armor block",
	ArmorTruncated:     "truncated: no END line",
	ArmorBadHeader:     "malformed header",
	ArmorUnknownHeader: "unknown header",
	ArmorBadBase64:     "bad base64",
	ArmorNoChecksum:    "missing CRC-24 checksum",
	ArmorBadChecksum:   "CRC-24 checksum does not match",
	ArmorBadEnd:        "bad END line",
	ArmorBlockType:     "unexpected block type",
	ArmorUnknownKDF:    "unknown key derivation",
	ArmorBadSalt:       "bad salt",
	ArmorBadCost:       "bad bcrypt cost",
	ArmorTooLarge:      "too large",
	ArmorBadPayload:    "malformed payload",
	ArmorTrailingData:  "data after the last block",
}

func (p ArmorProblem) String() string {
	if s, ok := problemText[p]; ok {
		return s
	}
	return fmt.Sprintf("ArmorProblem(%d)", uint8(p))
}

// ArmorError reports armor that cannot be read. It unwraps to
// signer.ErrUnsupported for an unknown key derivation (the file may be
// fine, for another program) and to signer.ErrCorrupt otherwise. Its
// message never quotes the armor's body, which may hold a key.
type ArmorError struct {
	Problem ArmorProblem
	// Line is the 1-based line of the input where the problem is, or 0.
	Line int
	// Detail says more, e.g. the unknown header's name; it never holds key
	// material.
	Detail string
}

func (e *ArmorError) Error() string {
	msg := "keybase: armor"
	if e.Line > 0 {
		msg += fmt.Sprintf(" line %d", e.Line)
	}
	msg += ": " + e.Problem.String()
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// Unwrap returns the sentinel the problem belongs to.
func (e *ArmorError) Unwrap() error {
	if e.Problem == ArmorUnknownKDF {
		return signer.ErrUnsupported
	}
	return signer.ErrCorrupt
}

func armorErr(p ArmorProblem, line int, detail string) *ArmorError {
	return &ArmorError{Problem: p, Line: line, Detail: detail}
}

// block is one armored block.
type block struct {
	Type    string
	Headers []header // in the order read or to write
	Data    []byte
	// line is the number of the BEGIN line; set by the reader only.
	line int
}

type header struct{ Key, Value string }

func (b *block) header(key string) (string, bool) {
	for _, h := range b.Headers {
		if h.Key == key {
			return h.Value, true
		}
	}
	return "", false
}

// encodeBlock writes b as golang.org/x/crypto/openpgp/armor does.
func encodeBlock(b block) []byte {
	var out bytes.Buffer
	out.WriteString(armorBegin + b.Type + armorDash + "\n")
	for _, h := range b.Headers {
		out.WriteString(h.Key + ": " + h.Value + "\n")
	}
	out.WriteString("\n")
	body := make([]byte, base64.StdEncoding.EncodedLen(len(b.Data)))
	base64.StdEncoding.Encode(body, b.Data)
	for len(body) > 0 {
		n := min(lineLength, len(body))
		out.Write(body[:n])
		body = body[n:]
		if len(body) > 0 {
			out.WriteByte('\n')
		}
	}
	clear(body)
	crc := crc24(b.Data)
	out.WriteString("\n=" + base64.StdEncoding.EncodeToString([]byte{byte(crc >> 16), byte(crc >> 8), byte(crc)}))
	out.WriteString("\n" + armorEnd + b.Type + armorDash)
	return out.Bytes()
}

// crc24 is the OpenPGP checksum (RFC 4880 §6.1).
func crc24(data []byte) uint32 {
	const poly = 0x1864cfb
	crc := uint32(0xb704ce)
	for _, b := range data {
		crc ^= uint32(b) << 16
		for range 8 {
			crc <<= 1
			if crc&0x1000000 != 0 {
				crc ^= poly
			}
		}
	}
	return crc & 0xffffff
}

// lines reads its input a line at a time, LF or CRLF, counting lines.
type lines struct {
	data []byte
	pos  int // offset of the next line
	n    int // number of the line last returned
}

// next returns the next line without its line ending; ok is false at the
// end of the input.
func (l *lines) next() (line []byte, ok bool) {
	if l.pos >= len(l.data) {
		return nil, false
	}
	rest := l.data[l.pos:]
	i := bytes.IndexByte(rest, '\n')
	if i < 0 {
		line, l.pos = rest, len(l.data)
	} else {
		line, l.pos = rest[:i], l.pos+i+1
	}
	l.n++
	return bytes.TrimSuffix(line, []byte("\r")), true
}

// decodeBlock reads the next block from l. Text before the BEGIN line is
// skipped, as OpenPGP readers (and gnokey) skip it.
func decodeBlock(l *lines) (block, error) {
	var b block
	if len(l.data) > maxArmor {
		return b, armorErr(ArmorTooLarge, 0, fmt.Sprintf("%d bytes, at most %d", len(l.data), maxArmor))
	}
	for {
		line, ok := l.next()
		if !ok {
			return b, armorErr(ArmorNoBlock, 0, "")
		}
		t := bytes.TrimSpace(line)
		if bytes.HasPrefix(t, []byte(armorBegin)) && bytes.HasSuffix(t, []byte(armorDash)) && len(t) > len(armorBegin)+len(armorDash) {
			b.Type = string(t[len(armorBegin) : len(t)-len(armorDash)])
			b.line = l.n
			break
		}
	}
	// Headers, up to a blank line.
	for {
		line, ok := l.next()
		if !ok {
			return b, armorErr(ArmorTruncated, l.n, "in the headers")
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			break
		}
		k, v, found := bytes.Cut(line, []byte(": "))
		if !found || len(k) == 0 {
			return b, armorErr(ArmorBadHeader, l.n, "want \"Key: Value\" then a blank line")
		}
		if len(b.Headers) == maxHeaders {
			return b, armorErr(ArmorTooLarge, l.n, fmt.Sprintf("more than %d headers", maxHeaders))
		}
		if _, dup := b.header(string(k)); dup {
			return b, armorErr(ArmorBadHeader, l.n, fmt.Sprintf("%q given twice", k))
		}
		b.Headers = append(b.Headers, header{string(k), string(v)})
	}
	// Body, up to the checksum line.
	var body []byte
	defer func() { clear(body) }()
	sumLine := 0
	var sum []byte
	for {
		line, ok := l.next()
		if !ok {
			return b, armorErr(ArmorTruncated, l.n, "in the body")
		}
		line = bytes.TrimSpace(line)
		if bytes.HasPrefix(line, []byte(armorEnd)) {
			return b, armorErr(ArmorNoChecksum, l.n, "")
		}
		if len(line) > 0 && line[0] == '=' { // base64 lines of 4k characters never start with '='
			sumLine, sum = l.n, line[1:]
			break
		}
		if len(line) > maxLine {
			return b, armorErr(ArmorBadBase64, l.n, fmt.Sprintf("line longer than %d characters", maxLine))
		}
		if !base64Line(line) {
			return b, armorErr(ArmorBadBase64, l.n, "")
		}
		body = append(body, line...)
	}
	data := make([]byte, base64.StdEncoding.DecodedLen(len(body)))
	n, err := base64.StdEncoding.Strict().Decode(data, body)
	if err != nil {
		clear(data)
		return b, armorErr(ArmorBadBase64, 0, "in the body")
	}
	if err := checkTail(l, b.Type, data[:n], sum, sumLine); err != nil {
		clear(data) // an unencrypted key's bytes
		return b, err
	}
	b.Data = data[:n]
	return b, nil
}

// checkTail checks the checksum line (sum, after its '=') against data and
// reads the END line of a block of type typ.
func checkTail(l *lines, typ string, data, sum []byte, sumLine int) error {
	var want [3]byte
	if len(sum) != 4 {
		return armorErr(ArmorNoChecksum, sumLine, "want \"=\" and 4 base64 characters")
	}
	if k, err := base64.StdEncoding.Strict().Decode(want[:], sum); err != nil || k != 3 {
		return armorErr(ArmorNoChecksum, sumLine, "want \"=\" and 4 base64 characters")
	}
	if crc24(data) != uint32(want[0])<<16|uint32(want[1])<<8|uint32(want[2]) {
		return armorErr(ArmorBadChecksum, sumLine, "")
	}
	line, ok := l.next()
	if !ok {
		return armorErr(ArmorTruncated, l.n, "after the checksum")
	}
	line = bytes.TrimSpace(line)
	if !bytes.Equal(line, []byte(armorEnd+typ+armorDash)) {
		if bytes.HasPrefix(line, []byte(armorEnd)) {
			return armorErr(ArmorBadEnd, l.n, fmt.Sprintf("END of another type than %q", typ))
		}
		return armorErr(ArmorBadEnd, l.n, "want the END line after the checksum")
	}
	return nil
}

// base64Line reports whether line holds only base64 characters.
func base64Line(line []byte) bool {
	for _, c := range line {
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '+', c == '/', c == '=':
		default:
			return false
		}
	}
	return true
}

// checkEnd fails if anything but white space is left in l.
func checkEnd(l *lines) error {
	for {
		line, ok := l.next()
		if !ok {
			return nil
		}
		if len(bytes.TrimSpace(line)) > 0 {
			return armorErr(ArmorTrailingData, l.n, "")
		}
	}
}
