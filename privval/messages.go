package privval

import (
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/signerkit/signerkit/signbytes"
)

// Fields of the privval Message oneof (CometBFT v0.34 and v0.38, and gno's
// upstreampb).
const (
	msgPubKeyRequest          = 1
	msgPubKeyResponse         = 2
	msgSignVoteRequest        = 3
	msgSignedVoteResponse     = 4
	msgSignProposalRequest    = 5
	msgSignedProposalResponse = 6
	msgPingRequest            = 7
	msgPingResponse           = 8
)

// SignedMsgType values.
const (
	typePrevote   = 1
	typePrecommit = 2
	typeProposal  = 32
)

// MaxFrame is the largest privval message the Endpoint reads, as CometBFT
// and gno cap it (10 KiB, without the length prefix).
const MaxFrame = 10 * 1024

// vote is a tendermint.types.Vote. Extension and ExtensionSignature exist
// only in v0.38.
type vote struct {
	Type               int32
	Height             int64
	Round              int32
	BlockID            signbytes.BlockID
	Timestamp          time.Time
	ValidatorAddress   []byte
	ValidatorIndex     int32
	Signature          []byte
	Extension          []byte
	ExtensionSignature []byte
}

// proposal is a tendermint.types.Proposal.
type proposal struct {
	Type      int32
	Height    int64
	Round     int32
	POLRound  int32
	BlockID   signbytes.BlockID
	Timestamp time.Time
	Signature []byte
}

// request is a decoded request from the validator.
type request struct {
	kind     int // msgPubKeyRequest, msgSignVoteRequest, msgSignProposalRequest or msgPingRequest
	chainID  string
	vote     *vote     // nil when the request carries none
	proposal *proposal // nil when the request carries none
}

// remoteError is a RemoteSignerError.
type remoteError struct {
	Code        ErrorCode
	Description string
}

func protoErr(format string, args ...any) error {
	return &ProtocolError{Reason: fmt.Sprintf(format, args...)}
}

// decodeRequest decodes a privval Message from the validator. Anything but
// one request of the four kinds is a *ProtocolError; unknown fields inside
// a request are skipped, as protobuf decoders do.
func decodeRequest(b []byte, d Dialect) (request, error) {
	var req request
	n := 0
	err := fields(b, func(f field) error {
		n++
		if n > 1 {
			return protoErr("message with more than one field (field %d)", f.num)
		}
		switch f.num {
		case msgPubKeyRequest, msgSignVoteRequest, msgSignProposalRequest, msgPingRequest:
		case msgPubKeyResponse, msgSignedVoteResponse, msgSignedProposalResponse, msgPingResponse:
			return protoErr("a response (message field %d) where a request was expected", f.num)
		default:
			return &ProtocolError{Reason: fmt.Sprintf("unknown message type %d", f.num), Unknown: true}
		}
		if err := f.want(wireBytes); err != nil {
			return err
		}
		req.kind = f.num
		return fields(f.b, func(g field) error {
			switch {
			case f.num == msgPubKeyRequest && g.num == 1,
				f.num == msgSignVoteRequest && g.num == 2,
				f.num == msgSignProposalRequest && g.num == 2:
				s, err := g.bytes()
				if err != nil {
					return err
				}
				if !utf8.Valid(s) {
					return wireErr(g.off, "chain id is not UTF-8")
				}
				req.chainID = string(s)
			case f.num == msgSignVoteRequest && g.num == 1:
				if err := g.want(wireBytes); err != nil {
					return err
				}
				v, err := decodeVote(g.b, d)
				if err != nil {
					return err
				}
				req.vote = &v
			case f.num == msgSignProposalRequest && g.num == 1:
				if err := g.want(wireBytes); err != nil {
					return err
				}
				p, err := decodeProposal(g.b)
				if err != nil {
					return err
				}
				req.proposal = &p
			}
			return nil
		})
	})
	if err == nil && n == 0 {
		err = protoErr("empty message")
	}
	if err != nil {
		return request{}, asProtocolError(err)
	}
	return req, nil
}

func asProtocolError(err error) error {
	if we, ok := err.(*wireError); ok {
		return &ProtocolError{Reason: "malformed message: " + we.Error()}
	}
	return err
}

func decodeVote(b []byte, d Dialect) (vote, error) {
	var v vote
	err := fields(b, func(f field) error {
		var err error
		switch f.num {
		case 1:
			v.Type, err = f.int32()
		case 2:
			if err = f.want(wireVarint); err == nil {
				v.Height = int64(f.v)
			}
		case 3:
			v.Round, err = f.int32()
		case 4:
			if err = f.want(wireBytes); err == nil {
				v.BlockID, err = decodeBlockID(f.b)
			}
		case 5:
			if err = f.want(wireBytes); err == nil {
				v.Timestamp, err = decodeTimestamp(f.b)
			}
		case 6:
			v.ValidatorAddress, err = f.bytes()
		case 7:
			v.ValidatorIndex, err = f.int32()
		case 8:
			v.Signature, err = f.bytes()
		case 9:
			if d == V038 {
				v.Extension, err = f.bytes()
			}
		case 10:
			if d == V038 {
				v.ExtensionSignature, err = f.bytes()
			}
		}
		return err
	})
	return v, err
}

func decodeProposal(b []byte) (proposal, error) {
	var p proposal
	err := fields(b, func(f field) error {
		var err error
		switch f.num {
		case 1:
			p.Type, err = f.int32()
		case 2:
			if err = f.want(wireVarint); err == nil {
				p.Height = int64(f.v)
			}
		case 3:
			p.Round, err = f.int32()
		case 4:
			p.POLRound, err = f.int32()
		case 5:
			if err = f.want(wireBytes); err == nil {
				p.BlockID, err = decodeBlockID(f.b)
			}
		case 6:
			if err = f.want(wireBytes); err == nil {
				p.Timestamp, err = decodeTimestamp(f.b)
			}
		case 7:
			p.Signature, err = f.bytes()
		}
		return err
	})
	return p, err
}

func decodeBlockID(b []byte) (signbytes.BlockID, error) {
	var id signbytes.BlockID
	err := fields(b, func(f field) error {
		var err error
		switch f.num {
		case 1:
			id.Hash, err = f.bytes()
		case 2:
			if err = f.want(wireBytes); err != nil {
				return err
			}
			return fields(f.b, func(g field) error {
				var err error
				switch g.num {
				case 1:
					id.PartSetHeader.Total, err = g.uint32()
				case 2:
					id.PartSetHeader.Hash, err = g.bytes()
				}
				return err
			})
		}
		return err
	})
	return id, err
}

// Timestamps are kept within what signbytes accepts: years 1 to 9999.
const (
	minSeconds = -62135596800 // 0001-01-01T00:00:00Z
	maxSeconds = 253402300799 // 9999-12-31T23:59:59Z
)

func decodeTimestamp(b []byte) (time.Time, error) {
	var sec int64
	var nsec int64
	err := fields(b, func(f field) error {
		switch f.num {
		case 1:
			if err := f.want(wireVarint); err != nil {
				return err
			}
			sec = int64(f.v)
		case 2:
			n, err := f.int32()
			if err != nil {
				return err
			}
			nsec = int64(n)
		}
		return nil
	})
	if err != nil {
		return time.Time{}, err
	}
	if sec < minSeconds || sec > maxSeconds || nsec < 0 || nsec >= 1e9 {
		return time.Time{}, wireErr(0, "timestamp %d.%09d out of range", sec, nsec)
	}
	return time.Unix(sec, nsec).UTC(), nil
}

// decodeTimestamp's inverse: the zero time.Time is 0001-01-01, as gogoproto
// and protobuf-go write it.
func (e *enc) timestamp(field int, t time.Time) {
	e.message(field, func(m *enc) {
		m.int64(1, t.Unix())
		m.int32(2, int32(t.Nanosecond()))
	})
}

func (e *enc) blockID(field int, id signbytes.BlockID) {
	e.message(field, func(m *enc) {
		m.bytes(1, id.Hash)
		m.message(2, func(p *enc) {
			p.uvarint(1, uint64(id.PartSetHeader.Total))
			p.bytes(2, id.PartSetHeader.Hash)
		})
	})
}

func (e *enc) vote(field int, v *vote, d Dialect) {
	e.message(field, func(m *enc) {
		m.int32(1, v.Type)
		m.int64(2, v.Height)
		m.int32(3, v.Round)
		m.blockID(4, v.BlockID)
		m.timestamp(5, v.Timestamp)
		m.bytes(6, v.ValidatorAddress)
		m.int32(7, v.ValidatorIndex)
		m.bytes(8, v.Signature)
		if d == V038 {
			m.bytes(9, v.Extension)
			m.bytes(10, v.ExtensionSignature)
		}
	})
}

func (e *enc) proposal(field int, p *proposal) {
	e.message(field, func(m *enc) {
		m.int32(1, p.Type)
		m.int64(2, p.Height)
		m.int32(3, p.Round)
		m.int32(4, p.POLRound)
		m.blockID(5, p.BlockID)
		m.timestamp(6, p.Timestamp)
		m.bytes(7, p.Signature)
	})
}

func (e *enc) remoteError(field int, re *remoteError) {
	if re == nil {
		return
	}
	e.message(field, func(m *enc) {
		m.int32(1, int32(re.Code))
		m.string(2, re.Description)
	})
}

// appendPubKeyResponse appends a Message{PubKeyResponse}. With an error,
// v0.38 (gogoproto, non-nullable) writes an empty PublicKey; v0.34 leaves
// it out.
func appendPubKeyResponse(dst []byte, pub []byte, re *remoteError, d Dialect) []byte {
	e := enc{b: dst}
	e.message(msgPubKeyResponse, func(m *enc) {
		if re == nil || d == V038 {
			m.message(1, func(k *enc) { k.bytes(1, pub) })
		}
		m.remoteError(2, re)
	})
	return e.b
}

func appendSignedVoteResponse(dst []byte, v *vote, re *remoteError, d Dialect) []byte {
	e := enc{b: dst}
	e.message(msgSignedVoteResponse, func(m *enc) {
		switch {
		case v != nil:
			m.vote(1, v, d)
		case d == V038:
			m.bytesAlways(1, nil) // gogoproto's non-nullable empty Vote
		}
		m.remoteError(2, re)
	})
	return e.b
}

func appendSignedProposalResponse(dst []byte, p *proposal, re *remoteError, d Dialect) []byte {
	e := enc{b: dst}
	e.message(msgSignedProposalResponse, func(m *enc) {
		switch {
		case p != nil:
			m.proposal(1, p)
		case d == V038:
			m.bytesAlways(1, nil)
		}
		m.remoteError(2, re)
	})
	return e.b
}

func appendPingResponse(dst []byte) []byte {
	e := enc{b: dst}
	e.bytesAlways(msgPingResponse, nil)
	return e.b
}
