package threshold

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/threshold/frost"
)

// The protocol between a coordinator and a party, inside TLS 1.3, is a
// stream of frames, each a request or the response to one:
//
//	0  type (1 byte)
//	1  request id (4 bytes, big-endian), chosen by the coordinator and
//	   echoed in the response
//	5  body length (3 bytes, big-endian)
//	8  body
//
// Requests and their responses' bodies:
//
//	presign   count (2) flags (1)        → presigned: count × (handle 8, hiding 32, binding 32)
//	sign      handle (8) n (1) n × other signer's commitments (66) message → share: z (32)
//	release   count (2) count × handle (8)   → released: count released (2)
//	any                                  → error: code (1) text
//
// The commitments are frost's encodings (identifier 2, two elements 32
// each). A party knows its own identifier and commitments, so they are not
// sent. The body is the protocol payload; the frame header and TLS's
// record overhead are the rest of the wire bytes.
const (
	frameHeaderSize = 8
	// MaxMessage is the longest message a Signer signs.
	MaxMessage = 1 << 20
	maxBody    = MaxMessage + 1024

	// maxPresignBatch is the most nonce pairs one presign request asks for.
	maxPresignBatch = 1024
	presignedSize   = 8 + 2*frost.ElementSize
)

// Frame types.
const (
	typePresign   byte = 1
	typePresigned byte = 2
	typeSign      byte = 3
	typeShare     byte = 4
	typeError     byte = 5
	typeRelease   byte = 6 // discard fresh nonce pairs the coordinator dropped
	typeReleased  byte = 7
)

// presignOutstanding, in a presign request's flags, asks the party to
// return its fresh nonce pairs made earlier (for a coordinator that
// restarted) before new ones.
const presignOutstanding byte = 1

// Error codes a party returns.
const (
	codeInvalid     byte = 1 // malformed or inconsistent request
	codeNonceUsed   byte = 2 // the nonce handle is unknown or used
	codeDoubleSign  byte = 3 // the party's guard refused the message
	codeTooLarge    byte = 4 // message longer than MaxMessage
	codeUnavailable byte = 5 // the party cannot sign now (storage failure, closing)
)

type frame struct {
	typ  byte
	id   uint32
	body []byte
}

// frameWriter writes frames to w, coalescing the frames of concurrent
// writers into as few TLS records as it can: the last writer out flushes.
type frameWriter struct {
	waiting atomic.Int32
	mu      sync.Mutex
	bw      *bufio.Writer
	err     error
}

func newFrameWriter(w io.Writer) *frameWriter {
	return &frameWriter{bw: bufio.NewWriterSize(w, 16<<10)}
}

func (fw *frameWriter) write(f frame) error {
	if len(f.body) > maxBody {
		return fmt.Errorf("threshold: frame body of %d bytes: %w", len(f.body), signer.ErrMessageTooLarge)
	}
	fw.waiting.Add(1)
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if fw.err != nil {
		fw.waiting.Add(-1)
		return fw.err
	}
	var h [frameHeaderSize]byte
	h[0] = f.typ
	binary.BigEndian.PutUint32(h[1:], f.id)
	h[5], h[6], h[7] = byte(len(f.body)>>16), byte(len(f.body)>>8), byte(len(f.body))
	fw.bw.Write(h[:])
	fw.bw.Write(f.body)
	if fw.waiting.Add(-1) == 0 {
		fw.err = fw.bw.Flush()
	}
	return fw.err
}

// readFrame reads one frame, refusing bodies longer than maxBody.
func readFrame(r *bufio.Reader) (frame, error) {
	var h [frameHeaderSize]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return frame{}, err
	}
	n := int(h[5])<<16 | int(h[6])<<8 | int(h[7])
	if n > maxBody {
		return frame{}, fmt.Errorf("threshold: frame body of %d bytes: %w", n, signer.ErrProtocol)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return frame{}, err
	}
	return frame{typ: h[0], id: binary.BigEndian.Uint32(h[1:]), body: body}, nil
}

// ProtocolError is a frame that does not follow the protocol. It wraps
// signer.ErrProtocol.
type ProtocolError struct{ Reason string }

// Error describes the frame.
func (e *ProtocolError) Error() string {
	return fmt.Sprintf("threshold: %s: %v", e.Reason, signer.ErrProtocol)
}

// Unwrap returns signer.ErrProtocol.
func (e *ProtocolError) Unwrap() error { return signer.ErrProtocol }

type presignRequest struct {
	count uint16
	flags byte
}

func (p presignRequest) encode() []byte {
	return []byte{byte(p.count >> 8), byte(p.count), p.flags}
}

func parsePresignRequest(b []byte) (presignRequest, error) {
	if len(b) != 3 {
		return presignRequest{}, &ProtocolError{"presign request of wrong length"}
	}
	p := presignRequest{count: binary.BigEndian.Uint16(b), flags: b[2]}
	if p.count == 0 || p.count > maxPresignBatch || p.flags&^presignOutstanding != 0 {
		return presignRequest{}, &ProtocolError{fmt.Sprintf("presign request for %d pairs with flags %#x", p.count, p.flags)}
	}
	return p, nil
}

func encodePresigned(ps []frost.Presigned) ([]byte, error) {
	cs := make([]frost.SigningCommitments, len(ps))
	for i, p := range ps {
		cs[i] = p.Commitments
	}
	// All the elements at once: one field inversion for the batch.
	elems, err := frost.AppendCommitmentElements(nil, cs...)
	if err != nil {
		return nil, err
	}
	const pair = 2 * frost.ElementSize
	b := make([]byte, 0, len(ps)*presignedSize)
	for i, p := range ps {
		b = binary.BigEndian.AppendUint64(b, uint64(p.Handle))
		b = append(b, elems[i*pair:][:pair]...)
	}
	return b, nil
}

// parsePresigned decodes a presigned response from participant id.
func parsePresigned(b []byte, id frost.Identifier) ([]frost.Presigned, error) {
	if len(b)%presignedSize != 0 || len(b)/presignedSize > maxPresignBatch+frost.DefaultNonceCapacity {
		return nil, &ProtocolError{"presigned response of wrong length"}
	}
	out := make([]frost.Presigned, 0, len(b)/presignedSize)
	enc := make([]byte, frost.SigningCommitmentsSize)
	binary.BigEndian.PutUint16(enc, uint16(id))
	for ; len(b) > 0; b = b[presignedSize:] {
		copy(enc[2:], b[8:presignedSize])
		c, err := frost.ParseSigningCommitments(enc)
		if err != nil {
			return nil, err
		}
		out = append(out, frost.Presigned{Handle: frost.NonceHandle(binary.BigEndian.Uint64(b)), Commitments: c})
	}
	return out, nil
}

type signRequest struct {
	handle frost.NonceHandle
	others []frost.SigningCommitments
	msg    []byte
}

func (r signRequest) encode() ([]byte, error) {
	b := make([]byte, 0, 9+len(r.others)*frost.SigningCommitmentsSize+len(r.msg))
	b = binary.BigEndian.AppendUint64(b, uint64(r.handle))
	b = append(b, byte(len(r.others)))
	// The elements at once: one field inversion for all of them.
	elems, err := frost.AppendCommitmentElements(nil, r.others...)
	if err != nil {
		return nil, err
	}
	const pair = 2 * frost.ElementSize
	for i, c := range r.others {
		if c.ID == 0 {
			return nil, fmt.Errorf("threshold: signing commitments without an identifier: %w", signer.ErrInvalidArgument)
		}
		b = binary.BigEndian.AppendUint16(b, uint16(c.ID))
		b = append(b, elems[i*pair:][:pair]...)
	}
	return append(b, r.msg...), nil
}

func parseSignRequest(b []byte) (signRequest, error) {
	if len(b) < 9 {
		return signRequest{}, &ProtocolError{"short sign request"}
	}
	r := signRequest{handle: frost.NonceHandle(binary.BigEndian.Uint64(b))}
	n := int(b[8])
	b = b[9:]
	if n == 0 || len(b) < n*frost.SigningCommitmentsSize {
		return signRequest{}, &ProtocolError{fmt.Sprintf("sign request with %d other signers", n)}
	}
	for range n {
		c, err := frost.ParseSigningCommitments(b[:frost.SigningCommitmentsSize])
		if err != nil {
			return signRequest{}, err
		}
		r.others = append(r.others, c)
		b = b[frost.SigningCommitmentsSize:]
	}
	r.msg = b
	return r, nil
}

func encodeError(code byte, text string) []byte {
	if len(text) > 200 {
		text = text[:200]
	}
	return append([]byte{code}, text...)
}

// encodeRelease encodes a release request for hs (at most
// maxPresignBatch).
func encodeRelease(hs []frost.NonceHandle) []byte {
	b := binary.BigEndian.AppendUint16(make([]byte, 0, 2+8*len(hs)), uint16(len(hs)))
	for _, h := range hs {
		b = binary.BigEndian.AppendUint64(b, uint64(h))
	}
	return b
}

func parseRelease(b []byte) ([]frost.NonceHandle, error) {
	if len(b) < 2 {
		return nil, &ProtocolError{"release request of wrong length"}
	}
	n := int(binary.BigEndian.Uint16(b))
	if n == 0 || n > maxPresignBatch || len(b) != 2+8*n {
		return nil, &ProtocolError{fmt.Sprintf("release request for %d handles in %d bytes", n, len(b))}
	}
	hs := make([]frost.NonceHandle, n)
	for i := range hs {
		hs[i] = frost.NonceHandle(binary.BigEndian.Uint64(b[2+8*i:]))
	}
	return hs, nil
}
