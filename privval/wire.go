package privval

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"net"
	"time"

	"github.com/signerkit/signerkit/internal/pbwire"
)

// Protobuf wire types.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// enc appends protobuf wire fields to b. Scalars with zero values are left
// out, as proto3 encoders do.
type enc struct{ b []byte }

func (e *enc) key(field, wire int) { e.b = binary.AppendUvarint(e.b, uint64(field)<<3|uint64(wire)) }

func (e *enc) uvarint(field int, v uint64) {
	if v != 0 {
		e.key(field, wireVarint)
		e.b = binary.AppendUvarint(e.b, v)
	}
}

// int32 encodes a proto int32: negative values are sign-extended to ten
// bytes, as every protobuf encoder does.
func (e *enc) int32(field int, v int32) { e.uvarint(field, uint64(int64(v))) }

func (e *enc) int64(field int, v int64) { e.uvarint(field, uint64(v)) }

func (e *enc) bytes(field int, v []byte) {
	if len(v) != 0 {
		e.bytesAlways(field, v)
	}
}

func (e *enc) bytesAlways(field int, v []byte) {
	e.key(field, wireBytes)
	e.b = binary.AppendUvarint(e.b, uint64(len(v)))
	e.b = append(e.b, v...)
}

func (e *enc) string(field int, v string) {
	if v != "" {
		e.key(field, wireBytes)
		e.b = binary.AppendUvarint(e.b, uint64(len(v)))
		e.b = append(e.b, v...)
	}
}

// message writes a nested message, even an empty one (gogoproto's
// non-nullable fields and set oneof members are always written).
// inner writes the message's fields in place (package pbwire).
func (e *enc) message(field int, inner func(*enc)) {
	var start int
	e.b, start = pbwire.Begin(e.b, field)
	inner(e)
	e.b = pbwire.End(e.b, start)
}

// field is one decoded protobuf field.
type field struct {
	num  int
	wire int
	v    uint64 // varint and fixed values
	b    []byte // length-delimited contents, aliasing the input
	off  int    // offset of the field's key in the message
}

// fields calls fn for every field of the protobuf message b, in order.
// It fails on truncation, overlong varints, field number 0, and the
// deprecated group wire types.
func fields(b []byte, fn func(f field) error) error {
	for off := 0; off < len(b); {
		start := off
		k, n := binary.Uvarint(b[off:])
		if n <= 0 {
			return wireErr(start, "bad field key")
		}
		off += n
		f := field{num: int(k >> 3), wire: int(k & 7), off: start}
		if k>>3 == 0 || k>>3 > math.MaxInt32 {
			return wireErr(start, "field number %d out of range", k>>3)
		}
		switch f.wire {
		case wireVarint:
			v, n := binary.Uvarint(b[off:])
			if n <= 0 {
				return wireErr(off, "bad varint")
			}
			f.v, off = v, off+n
		case wireFixed64:
			if len(b)-off < 8 {
				return wireErr(off, "truncated fixed64")
			}
			f.v, off = binary.LittleEndian.Uint64(b[off:]), off+8
		case wireFixed32:
			if len(b)-off < 4 {
				return wireErr(off, "truncated fixed32")
			}
			f.v, off = uint64(binary.LittleEndian.Uint32(b[off:])), off+4
		case wireBytes:
			l, n := binary.Uvarint(b[off:])
			if n <= 0 {
				return wireErr(off, "bad length")
			}
			off += n
			if l > uint64(len(b)-off) {
				return wireErr(off, "length %d past the end of the message", l)
			}
			f.b, off = b[off:off+int(l)], off+int(l)
		default:
			return wireErr(start, "wire type %d of field %d", f.wire, f.num)
		}
		if err := fn(f); err != nil {
			return err
		}
	}
	return nil
}

// want checks a known field's wire type.
func (f field) want(wire int) error {
	if f.wire != wire {
		return wireErr(f.off, "field %d has wire type %d, want %d", f.num, f.wire, wire)
	}
	return nil
}

// int32 reads a proto int32 from a varint field; larger values are refused
// rather than truncated.
func (f field) int32() (int32, error) {
	if err := f.want(wireVarint); err != nil {
		return 0, err
	}
	v := int64(f.v)
	if v < math.MinInt32 || v > math.MaxInt32 {
		return 0, wireErr(f.off, "field %d: %d is out of int32 range", f.num, v)
	}
	return int32(v), nil
}

func (f field) uint32() (uint32, error) {
	if err := f.want(wireVarint); err != nil {
		return 0, err
	}
	if f.v > math.MaxUint32 {
		return 0, wireErr(f.off, "field %d: %d is out of uint32 range", f.num, f.v)
	}
	return uint32(f.v), nil
}

func (f field) bytes() ([]byte, error) {
	if err := f.want(wireBytes); err != nil {
		return nil, err
	}
	return f.b, nil
}

// wireErr is the error of a malformed message; readFrame and the decoders
// wrap it in a *ProtocolError.
type wireError struct {
	off int
	msg string
}

func (e *wireError) Error() string { return fmt.Sprintf("%s at offset %d", e.msg, e.off) }

func wireErr(off int, format string, args ...any) error {
	return &wireError{off: off, msg: fmt.Sprintf(format, args...)}
}

// frameReader reads uvarint-length-delimited frames.
type frameReader interface {
	io.Reader
	io.ByteReader
}

// frameChunk is what readFrame allocates first for a frame longer than
// the buffer it was given; it doubles from there as the data arrives.
const frameChunk = 4096

// readFrame reads one uvarint(len) + payload frame of at most max bytes.
// buf is reused when it is large enough. A length above max is refused
// before anything is allocated or read. Otherwise the buffer grows with
// the data actually received (from frameChunk, doubling, up to the length
// announced), not with the length: a peer that announces max bytes and
// sends nothing costs the server frameChunk bytes, not max.
func readFrame(r frameReader, max int, buf []byte) ([]byte, error) {
	n, err := readUvarint(r)
	if err != nil {
		return nil, channelError(err)
	}
	if n > uint64(max) {
		return nil, &ProtocolError{Reason: fmt.Sprintf("frame of %d bytes, more than %d", n, max), TooLarge: true}
	}
	size := int(n)
	buf = buf[:0]
	for len(buf) < size {
		if len(buf) == cap(buf) {
			c := 2 * cap(buf)
			if c < frameChunk {
				c = frameChunk
			}
			grown := make([]byte, len(buf), min(size, c))
			copy(grown, buf)
			buf = grown
		}
		m, err := r.Read(buf[len(buf):min(size, cap(buf))])
		buf = buf[:len(buf)+m]
		if err != nil {
			if len(buf) == size {
				break
			}
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, channelError(err)
		}
	}
	return buf, nil
}

// readUvarint reads a frame's length prefix. io.EOF before the first byte
// is a clean end of the stream; a varint longer than ten bytes or past
// 64 bits is a *ProtocolError.
func readUvarint(r io.ByteReader) (uint64, error) {
	var x uint64
	for i := 0; ; i++ {
		c, err := r.ReadByte()
		if err != nil {
			if i > 0 && err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		if i == 9 && c > 1 {
			return 0, &ProtocolError{Reason: "frame length overflows 64 bits"}
		}
		x |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return x, nil
		}
	}
}

// appendFrame appends uvarint(len(msg)) + msg to dst.
func appendFrame(dst, msg []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(msg)))
	return append(dst, msg...)
}

// writeFrame writes frame to conn within timeout.
func writeFrame(conn net.Conn, frame []byte, timeout time.Duration) error {
	if err := conn.SetWriteDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	_, err := conn.Write(frame)
	return err
}
