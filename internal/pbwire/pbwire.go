// Package pbwire writes nested protobuf messages in place. Begin appends
// a length-delimited field's key and one byte kept for its length; the
// caller appends the message's fields after it; End writes the length,
// moving the message up in the rare case that it needs more than one
// byte. A sign request's encoders (package signbytes for sign bytes,
// package privval for the remote-signer messages) nest three deep, and
// encoding each level into a buffer of its own allocated and copied at
// every level.
package pbwire

import "encoding/binary"

// wireBytes is protobuf's length-delimited wire type.
const wireBytes = 2

// Begin appends the key of field (length-delimited) and a byte kept for
// the length to b, and returns b and the offset where the message's
// bytes start: pass both to End once they are appended.
func Begin(b []byte, field int) ([]byte, int) {
	b = binary.AppendUvarint(b, uint64(field)<<3|wireBytes)
	b = append(b, 0)
	return b, len(b)
}

// End writes the length of b[start:] as a uvarint into the byte kept
// for it at b[start-1] (by Begin, or by the caller for a top-level
// length prefix), and returns b.
func End(b []byte, start int) []byte {
	n := len(b) - start
	if n < 0x80 {
		b[start-1] = byte(n)
		return b
	}
	var l [binary.MaxVarintLen64]byte
	k := binary.PutUvarint(l[:], uint64(n))
	b = append(b, l[:k-1]...)
	copy(b[start+k-1:], b[start:start+n])
	copy(b[start-1:], l[:k])
	return b
}
