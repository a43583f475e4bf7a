package secretconn

import (
	"crypto/ed25519"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// maxHandshakeMsg bounds the body of a handshake message. The largest valid
// one (a protobuf AuthSigMessage with an Ed25519 key) is 102 bytes; the
// vendors read up to 1 MiB, which nothing legitimate needs.
const maxHandshakeMsg = 1024

// appendDelimited appends uvarint(len(body)) and body.
func appendDelimited(dst, body []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(body)))
	return append(dst, body...)
}

// appendBytesField appends protobuf field num, wire type 2, with v.
func appendBytesField(dst []byte, num int, v []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(num)<<3|2)
	dst = binary.AppendUvarint(dst, uint64(len(v)))
	return append(dst, v...)
}

// encodeEphKey is the ephemeral key message, identical in both variants:
// protobuf BytesValue{1: key} (amino encodes a [32]byte alike), delimited.
func encodeEphKey(pub []byte) []byte {
	return appendDelimited(nil, appendBytesField(nil, 1, pub))
}

// encodeAuthSig is the authentication message. Merlin: protobuf
// AuthSigMessage{1: PublicKey{1: ed25519}, 2: sig}. PreMerlin: amino
// authSigMessage{1: ed25519 key bytes, 2: sig}.
func encodeAuthSig(v Variant, pub ed25519.PublicKey, sig []byte) []byte {
	key := []byte(pub)
	if v == Merlin {
		key = appendBytesField(nil, 1, pub)
	}
	body := appendBytesField(nil, 1, key)
	body = appendBytesField(body, 2, sig)
	return appendDelimited(nil, body)
}

// readDelimited reads uvarint(n) and n bytes from r, one byte at a time for
// the length so that nothing after the message is consumed.
func readDelimited(r io.Reader, max int) ([]byte, error) {
	var n uint64
	var b [1]byte
	for shift := 0; ; shift += 7 {
		if shift >= 63 {
			return nil, errMalformed("length prefix overflows")
		}
		if _, err := io.ReadFull(r, b[:]); err != nil {
			if shift > 0 && errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		n |= uint64(b[0]&0x7f) << shift
		if b[0] < 0x80 {
			break
		}
	}
	if n > uint64(max) {
		return nil, errTooLarge(n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return body, nil
}

// wireError is a decoding failure; the handshake maps it to an *Error.
type wireError struct {
	cause  error
	detail string
}

func (e *wireError) Error() string { return e.cause.Error() + ": " + e.detail }

func errMalformed(detail string) error { return &wireError{ErrMalformed, detail} }
func errTooLarge(n uint64) error {
	return &wireError{ErrMessageTooLarge, fmt.Sprintf("%d bytes, at most %d", n, maxHandshakeMsg)}
}

// nextField splits the first protobuf field off b. For wire type 2 val is
// the payload; for the others it is the raw encoding, which callers skip.
func nextField(b []byte) (num uint64, typ byte, val, rest []byte, err error) {
	key, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, 0, nil, nil, errMalformed("bad field key")
	}
	b = b[n:]
	num, typ = key>>3, byte(key&7)
	if num == 0 || num > 1<<29-1 {
		return 0, 0, nil, nil, errMalformed("bad field number")
	}
	switch typ {
	case 0: // varint
		if _, n = binary.Uvarint(b); n <= 0 {
			return 0, 0, nil, nil, errMalformed("bad varint")
		}
	case 1: // fixed64
		n = 8
	case 5: // fixed32
		n = 4
	case 2: // length-delimited
		l, m := binary.Uvarint(b)
		if m <= 0 || l > uint64(len(b)-m) {
			return 0, 0, nil, nil, errMalformed("bad length")
		}
		return num, typ, b[m : m+int(l)], b[m+int(l):], nil
	default:
		return 0, 0, nil, nil, errMalformed(fmt.Sprintf("wire type %d", typ))
	}
	if n > len(b) {
		return 0, 0, nil, nil, errMalformed("truncated field")
	}
	return num, typ, b[:n], b[n:], nil
}

// bytesField returns the last occurrence of bytes field num in msg (the
// protobuf rule for a repeated scalar), skipping other fields. A field num
// of another wire type is malformed.
func bytesField(msg []byte, num uint64) (val []byte, found bool, err error) {
	for len(msg) > 0 {
		n, typ, v, rest, err := nextField(msg)
		if err != nil {
			return nil, false, err
		}
		if n == num {
			if typ != 2 {
				return nil, false, errMalformed(fmt.Sprintf("field %d has wire type %d", num, typ))
			}
			val, found = v, true
		}
		msg = rest
	}
	return val, found, nil
}

// decodeEphKey decodes the body of an ephemeral key message.
func decodeEphKey(body []byte) ([32]byte, error) {
	var k [32]byte
	v, _, err := bytesField(body, 1)
	if err != nil {
		return k, err
	}
	if len(v) != len(k) {
		return k, errMalformed(fmt.Sprintf("ephemeral key of %d bytes", len(v)))
	}
	copy(k[:], v)
	return k, nil
}

// decodeAuthSig decodes the body of an authentication message.
func decodeAuthSig(v Variant, body []byte) (ed25519.PublicKey, []byte, error) {
	key, found, err := bytesField(body, 1)
	if err != nil {
		return nil, nil, err
	}
	if !found {
		return nil, nil, errMalformed("no public key")
	}
	if v == Merlin {
		// PublicKey is a oneof: 1 ed25519, 2 secp256k1, and later
		// versions add more. Only ed25519 identifies a peer here.
		var pk []byte
		var kind uint64
		for m := key; len(m) > 0; {
			n, typ, val, rest, err := nextField(m)
			if err != nil {
				return nil, nil, err
			}
			if typ == 2 {
				kind, pk = n, val
			}
			m = rest
		}
		if kind != 1 {
			if kind == 0 {
				return nil, nil, errMalformed("empty public key")
			}
			return nil, nil, &wireError{ErrUnsupportedKey, fmt.Sprintf("PublicKey field %d", kind)}
		}
		key = pk
	}
	if len(key) != ed25519.PublicKeySize {
		return nil, nil, errMalformed(fmt.Sprintf("Ed25519 key of %d bytes", len(key)))
	}
	sig, _, err := bytesField(body, 2)
	if err != nil {
		return nil, nil, err
	}
	return ed25519.PublicKey(key), sig, nil
}
