package cggmp21

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/fxamacker/cbor/v2"
	"github.com/taurusgroup/multi-party-sig/pkg/protocol"
)

// A frame is what one party sends another over their connection:
//
//	length  uint32, big-endian: the bytes after this field
//	session uint64, big-endian: the Mesh's session the frame belongs to
//	kind    byte: kindMessage or kindRequest
//	body    a protocol.Message in the library's CBOR encoding, or a request
//
// The payload the Mesh counts is the body.
const (
	frameHeader = 4 + 8 + 1
	// MaxFrame bounds a frame's length field; the largest message of a
	// key generation (its zero-knowledge proofs of the Paillier and
	// Pedersen parameters) is a few tens of kilobytes.
	MaxFrame = 4 << 20

	kindMessage byte = 1
	kindRequest byte = 2
)

// ErrFrame is wrapped by every error of a frame or message that cannot be
// read: a length out of bounds, an unknown kind, a body that is not a
// message of the library, or one whose sender is not the connection's
// peer.
var ErrFrame = errors.New("cggmp21: bad frame")

// frame is a decoded frame.
type frame struct {
	session uint64
	kind    byte
	body    []byte
}

// appendFrame appends f's encoding to dst.
func appendFrame(dst []byte, f frame) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(8+1+len(f.body)))
	dst = binary.BigEndian.AppendUint64(dst, f.session)
	dst = append(dst, f.kind)
	return append(dst, f.body...)
}

// readFrame reads one frame from r. io.EOF means r ended between frames.
func readFrame(r io.Reader) (frame, error) {
	var h [frameHeader]byte
	if _, err := io.ReadFull(r, h[:4]); err == io.ErrUnexpectedEOF {
		return frame{}, fmt.Errorf("%w: length: %w", ErrFrame, err)
	} else if err != nil {
		return frame{}, err
	}
	n := binary.BigEndian.Uint32(h[:4])
	if n < 9 || n > MaxFrame {
		return frame{}, fmt.Errorf("%w: length %d, want 9 to %d", ErrFrame, n, MaxFrame)
	}
	if _, err := io.ReadFull(r, h[4:]); err != nil {
		return frame{}, fmt.Errorf("%w: header: %w", ErrFrame, noEOF(err))
	}
	f := frame{session: binary.BigEndian.Uint64(h[4:12]), kind: h[12]}
	if f.kind != kindMessage && f.kind != kindRequest {
		return frame{}, fmt.Errorf("%w: kind %d", ErrFrame, f.kind)
	}
	f.body = make([]byte, n-9)
	if _, err := io.ReadFull(r, f.body); err != nil {
		return frame{}, fmt.Errorf("%w: body: %w", ErrFrame, noEOF(err))
	}
	return f, nil
}

// noEOF turns an io.EOF within a frame into io.ErrUnexpectedEOF.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// wireMessage mirrors protocol.Message's CBOR encoding (its
// MarshalBinary), decoded here because the library's UnmarshalBinary
// drops the decoder's error.
type wireMessage struct {
	SSID                  []byte
	From                  string
	To                    string
	Protocol              string
	RoundNumber           uint16
	Data                  []byte
	Broadcast             bool
	BroadcastVerification []byte
}

// decodeMessage decodes a kindMessage body sent by the party from.
func decodeMessage(body []byte, from string) (*protocol.Message, error) {
	var w wireMessage
	if err := cbor.Unmarshal(body, &w); err != nil {
		return nil, fmt.Errorf("%w: message: %w", ErrFrame, err)
	}
	if w.From != from {
		return nil, fmt.Errorf("%w: a message from %q on the connection of party %q", ErrFrame, w.From, from)
	}
	var m protocol.Message
	if err := m.UnmarshalBinary(body); err != nil {
		return nil, fmt.Errorf("%w: message: %w", ErrFrame, err)
	}
	return &m, nil
}

// request asks a signer to start its side of an online sign: the
// presignature to use and the 32-byte hash to sign.
type request struct {
	presig uint32
	hash   [32]byte
}

func (q request) encode() []byte {
	return append(binary.BigEndian.AppendUint32(nil, q.presig), q.hash[:]...)
}

func decodeRequest(b []byte) (request, error) {
	if len(b) != 4+32 {
		return request{}, fmt.Errorf("%w: request of %d bytes, want 36", ErrFrame, len(b))
	}
	q := request{presig: binary.BigEndian.Uint32(b)}
	copy(q.hash[:], b[4:])
	return q, nil
}
