package privvaltest

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/signerkit/signerkit/privval"
	"github.com/signerkit/signerkit/signbytes"
)

// Fields of the privval Message oneof (CometBFT v0.34 and v0.38, gno's
// upstreampb).
const (
	fPubKeyRequest          = 1
	fPubKeyResponse         = 2
	fSignVoteRequest        = 3
	fSignedVoteResponse     = 4
	fSignProposalRequest    = 5
	fSignedProposalResponse = 6
	fPingRequest            = 7
	fPingResponse           = 8
)

// SignedMsgType values.
const (
	typePrevote   = 1
	typePrecommit = 2
	typeProposal  = 32
)

// Amino names of gno's native remote-signer messages.
const (
	nativePubKeyRequest  = "/tm.remotesigner.PubKeyRequest"
	nativePubKeyResponse = "/tm.remotesigner.PubKeyResponse"
	nativeSignRequest    = "/tm.remotesigner.SignRequest"
	nativeSignResponse   = "/tm.remotesigner.SignResponse"
	nativePubKeyEd25519  = "/tm.PubKeyEd25519"
)

// pb appends protobuf fields; zero scalars are left out, as proto3
// encoders do, and nested messages are always written.
type pb []byte

func (b pb) key(field, wire int) pb { return binary.AppendUvarint(b, uint64(field)<<3|uint64(wire)) }

func (b pb) varint(field int, v uint64) pb {
	if v == 0 {
		return b
	}
	return binary.AppendUvarint(b.key(field, 0), v)
}

// int64 also encodes proto int32: a negative value is sign-extended to ten
// bytes.
func (b pb) int64(field int, v int64) pb { return b.varint(field, uint64(v)) }

func (b pb) always(field int, v []byte) pb {
	b = binary.AppendUvarint(b.key(field, 2), uint64(len(v)))
	return append(b, v...)
}

func (b pb) bytes(field int, v []byte) pb {
	if len(v) == 0 {
		return b
	}
	return b.always(field, v)
}

func (b pb) message(field int, inner pb) pb { return b.always(field, inner) }

func (b pb) timestamp(field int, t time.Time) pb {
	return b.message(field, pb(nil).int64(1, t.Unix()).int64(2, int64(t.Nanosecond())))
}

func (b pb) blockID(field int, id signbytes.BlockID) pb {
	psh := pb(nil).varint(1, uint64(id.PartSetHeader.Total)).bytes(2, id.PartSetHeader.Hash)
	return b.message(field, pb(nil).bytes(1, id.Hash).message(2, psh))
}

func (b pb) vote(field int, v *Vote, d privval.Dialect) pb {
	m := pb(nil).int64(1, int64(voteType(v.Phase))).int64(2, v.Height).int64(3, int64(v.Round)).
		blockID(4, v.BlockID).timestamp(5, v.Timestamp).bytes(6, v.ValidatorAddress).
		int64(7, int64(v.ValidatorIndex)).bytes(8, v.Signature)
	if d == privval.V038 {
		m = m.bytes(9, v.Extension).bytes(10, v.ExtensionSignature)
	}
	return b.message(field, m)
}

func (b pb) proposal(field int, p *Proposal) pb {
	return b.message(field, pb(nil).int64(1, typeProposal).int64(2, p.Height).int64(3, int64(p.Round)).
		int64(4, int64(p.POLRound)).blockID(5, p.BlockID).timestamp(6, p.Timestamp).bytes(7, p.Signature))
}

func voteType(p signbytes.Phase) int {
	switch p {
	case signbytes.Prevote:
		return typePrevote
	case signbytes.Precommit:
		return typePrecommit
	}
	return 0 // the signer refuses it, which a test may want to see
}

// field is one decoded protobuf field.
type field struct {
	num int
	v   uint64 // varint
	b   []byte // length-delimited contents
	lim bool   // wire type 2
}

var errMalformed = errors.New("privvaltest: malformed message")

// each calls fn for every field of b, in order. It knows the varint,
// length-delimited, fixed32 and fixed64 wire types.
func each(b []byte, fn func(f field) error) error {
	for len(b) > 0 {
		k, n := binary.Uvarint(b)
		if n <= 0 || k>>3 == 0 || k>>3 > math.MaxInt32 {
			return errMalformed
		}
		b = b[n:]
		f := field{num: int(k >> 3)}
		switch k & 7 {
		case 0:
			if f.v, n = binary.Uvarint(b); n <= 0 {
				return errMalformed
			}
			b = b[n:]
		case 1, 5:
			w := 8
			if k&7 == 5 {
				w = 4
			}
			if len(b) < w {
				return errMalformed
			}
			b = b[w:]
		case 2:
			l, n := binary.Uvarint(b)
			if n <= 0 || l > uint64(len(b)-n) {
				return errMalformed
			}
			f.b, f.lim, b = b[n:n+int(l)], true, b[n+int(l):]
		default:
			return errMalformed
		}
		if err := fn(f); err != nil {
			return err
		}
	}
	return nil
}

func decodeBlockID(b []byte) (id signbytes.BlockID, err error) {
	err = each(b, func(f field) error {
		switch f.num {
		case 1:
			id.Hash = bytes.Clone(f.b)
		case 2:
			return each(f.b, func(g field) error {
				switch g.num {
				case 1:
					id.PartSetHeader.Total = uint32(g.v)
				case 2:
					id.PartSetHeader.Hash = bytes.Clone(g.b)
				}
				return nil
			})
		}
		return nil
	})
	return id, err
}

func decodeTimestamp(b []byte) (time.Time, error) {
	var sec, nsec int64
	err := each(b, func(f field) error {
		switch f.num {
		case 1:
			sec = int64(f.v)
		case 2:
			nsec = int64(int32(f.v))
		}
		return nil
	})
	return time.Unix(sec, nsec).UTC(), err
}

func decodeVote(b []byte, d privval.Dialect) (*Vote, error) {
	v := &Vote{}
	err := each(b, func(f field) error {
		var err error
		switch f.num {
		case 1:
			switch f.v {
			case typePrevote:
				v.Phase = signbytes.Prevote
			case typePrecommit:
				v.Phase = signbytes.Precommit
			default:
				return fmt.Errorf("privvaltest: vote of type %d", f.v)
			}
		case 2:
			v.Height = int64(f.v)
		case 3:
			v.Round = int32(f.v)
		case 4:
			v.BlockID, err = decodeBlockID(f.b)
		case 5:
			v.Timestamp, err = decodeTimestamp(f.b)
		case 6:
			v.ValidatorAddress = bytes.Clone(f.b)
		case 7:
			v.ValidatorIndex = int32(f.v)
		case 8:
			v.Signature = bytes.Clone(f.b)
		case 9:
			if d == privval.V038 {
				v.Extension = bytes.Clone(f.b)
			}
		case 10:
			if d == privval.V038 {
				v.ExtensionSignature = bytes.Clone(f.b)
			}
		}
		return err
	})
	return v, err
}

func decodeProposal(b []byte) (*Proposal, error) {
	p := &Proposal{}
	err := each(b, func(f field) error {
		var err error
		switch f.num {
		case 1:
			if f.v != typeProposal {
				return fmt.Errorf("privvaltest: proposal of type %d", f.v)
			}
		case 2:
			p.Height = int64(f.v)
		case 3:
			p.Round = int32(f.v)
		case 4:
			p.POLRound = int32(f.v)
		case 5:
			p.BlockID, err = decodeBlockID(f.b)
		case 6:
			p.Timestamp, err = decodeTimestamp(f.b)
		case 7:
			p.Signature = bytes.Clone(f.b)
		}
		return err
	})
	return p, err
}

func decodeRemoteError(b []byte) (*RemoteSignerError, error) {
	e := &RemoteSignerError{}
	err := each(b, func(f field) error {
		switch f.num {
		case 1:
			e.Code = privval.ErrorCode(int32(f.v))
		case 2:
			e.Description = string(f.b)
		}
		return nil
	})
	return e, err
}

// response is a decoded privval Message from the signer.
type response struct {
	kind     int
	pub      []byte
	vote     *Vote
	proposal *Proposal
	err      *RemoteSignerError
}

func decodeResponse(b []byte, d privval.Dialect) (response, error) {
	var r response
	n := 0
	err := each(b, func(f field) error {
		if n++; n > 1 || !f.lim {
			return errMalformed
		}
		r.kind = f.num
		return each(f.b, func(g field) error {
			var err error
			switch {
			case g.num == 2 && f.num != fPingResponse:
				r.err, err = decodeRemoteError(g.b)
			case g.num != 1:
			case f.num == fPubKeyResponse:
				err = each(g.b, func(h field) error {
					if h.num == 1 { // the oneof's ed25519 member
						r.pub = bytes.Clone(h.b)
					}
					return nil
				})
			case f.num == fSignedVoteResponse:
				r.vote, err = decodeVote(g.b, d)
			case f.num == fSignedProposalResponse:
				r.proposal, err = decodeProposal(g.b)
			}
			return err
		})
	})
	if err == nil && n == 0 {
		err = errMalformed
	}
	return r, err
}

// any appends an amino google.protobuf.Any.
func anyOf(typeURL string, value []byte) pb {
	return pb(nil).bytes(1, []byte(typeURL)).bytes(2, value)
}

func decodeAny(b []byte) (typeURL string, value []byte, err error) {
	err = each(b, func(f field) error {
		switch f.num {
		case 1:
			typeURL = string(f.b)
		case 2:
			value = bytes.Clone(f.b)
		}
		return nil
	})
	return typeURL, value, err
}

// readFrame reads one uvarint-length-delimited frame of at most max bytes
// into buf, reused when large enough.
func readFrame(r *bufio.Reader, max int, buf []byte) ([]byte, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, err
	}
	if n > uint64(max) {
		return nil, fmt.Errorf("privvaltest: frame of %d bytes, more than %d", n, max)
	}
	if cap(buf) < int(n) {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf, nil
}
