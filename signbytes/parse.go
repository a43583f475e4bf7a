package signbytes

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/signerkit/signerkit/signer"
)

// Protobuf wire types.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
)

// Error says why bytes are not canonical sign bytes, or why a Message
// cannot be encoded. It wraps signer.ErrInvalidMessage.
type Error struct {
	// Format is the set of dialects that were tried.
	Format Format
	// Offset is the byte offset in the input where decoding failed, or −1
	// when the failure is not at one place.
	Offset int
	// Reason says what is wrong, in words.
	Reason string
}

// Error returns "signbytes: " followed by the reason and offset.
func (e *Error) Error() string {
	if e.Offset >= 0 {
		return fmt.Sprintf("signbytes: %s (at byte %d, format %s)", e.Reason, e.Offset, e.Format)
	}
	return fmt.Sprintf("signbytes: %s (format %s)", e.Reason, e.Format)
}

// Unwrap returns signer.ErrInvalidMessage.
func (e *Error) Unwrap() error { return signer.ErrInvalidMessage }

// Parse reads the sign bytes of a vote, a proposal or (CometBFT only) a
// vote extension in any dialect. The returned Message's Format holds every
// dialect in which b is canonical, that is, exactly what that dialect's
// node would produce for the message; bytes canonical in neither are an
// *Error.
func Parse(b []byte) (Message, error) { return ParseFormat(b, AnyFormat) }

// ParseTM2 reads sign bytes as gno's tm2 produces them.
func ParseTM2(b []byte) (Message, error) { return ParseFormat(b, TM2) }

// ParseCometBFT reads sign bytes as CometBFT v0.34 or v0.38 produces them,
// vote extensions included.
func ParseCometBFT(b []byte) (Message, error) { return ParseFormat(b, CometBFT) }

// ParseFormat reads sign bytes canonical in at least one of the dialects
// in formats, and reports in Message.Format those in which they are.
func ParseFormat(b []byte, formats Format) (Message, error) {
	formats &= AnyFormat
	if formats == 0 {
		return Message{}, &Error{Format: formats, Offset: -1, Reason: "no sign-bytes dialect selected"}
	}
	p := parser{b: b, f: formats}
	m, err := p.parse()
	if err != nil {
		return Message{}, err
	}
	if m.Phase == VoteExtension {
		formats &^= TM2
		if formats == 0 {
			return Message{}, &Error{Format: p.f, Offset: p.start, Reason: "not a tm2 vote or proposal (no type field)"}
		}
	}
	for _, f := range []Format{TM2, CometBFT} {
		if formats&f != 0 && bytes.Equal(encode(m, f), b) {
			m.Format |= f
		}
	}
	if m.Format == 0 {
		return Message{}, &Error{Format: p.f, Offset: -1, Reason: "not in canonical form (field order, empty fields or varint length differ from what a node encodes)"}
	}
	return m, nil
}

type parser struct {
	b     []byte
	f     Format
	start int // offset of the canonical message after the length prefix
}

func (p *parser) fail(off int, format string, args ...any) error {
	return &Error{Format: p.f, Offset: off, Reason: fmt.Sprintf(format, args...)}
}

// field is one decoded protobuf field.
type field struct {
	num  int
	wire int
	v    uint64 // varint and fixed64 values
	data []byte // length-delimited value
	off  int    // offset of the field's key in p.b
	voff int    // offset of the value (after the key, and the length for bytes)
}

// fields decodes the fields of b[start:end] and calls fn on each, in
// order, refusing a field number seen twice.
func (p *parser) fields(start, end int, fn func(field) error) error {
	var seen uint64
	for off := start; off < end; {
		f := field{off: off}
		key, n := binary.Uvarint(p.b[off:end])
		if n <= 0 {
			return p.fail(off, "truncated or overlong field key")
		}
		off += n
		if key>>3 == 0 || key>>3 > 63 {
			return p.fail(f.off, "field number %d is not in the schema", key>>3)
		}
		f.num, f.wire = int(key>>3), int(key&7)
		if seen&(1<<f.num) != 0 {
			return p.fail(f.off, "field %d repeated", f.num)
		}
		seen |= 1 << f.num
		switch f.wire {
		case wireVarint:
			v, n := binary.Uvarint(p.b[off:end])
			if n <= 0 {
				return p.fail(off, "truncated or overlong varint in field %d", f.num)
			}
			f.v, f.voff = v, off
			off += n
		case wireFixed64:
			if end-off < 8 {
				return p.fail(off, "truncated fixed64 in field %d", f.num)
			}
			f.v, f.voff = binary.LittleEndian.Uint64(p.b[off:]), off
			off += 8
		case wireBytes:
			l, n := binary.Uvarint(p.b[off:end])
			if n <= 0 {
				return p.fail(off, "truncated or overlong length in field %d", f.num)
			}
			off += n
			if l > uint64(end-off) {
				return p.fail(off, "field %d is %d bytes long but only %d remain", f.num, l, end-off)
			}
			f.voff = off
			f.data = p.b[off : off+int(l)]
			off += int(l)
		default:
			return p.fail(f.off, "field %d has wire type %d, which sign bytes never use", f.num, f.wire)
		}
		if err := fn(f); err != nil {
			return err
		}
	}
	return nil
}

func (p *parser) want(f field, wire int) error {
	if f.wire != wire {
		return p.fail(f.off, "field %d has wire type %d, want %d", f.num, f.wire, wire)
	}
	return nil
}

func (p *parser) parse() (Message, error) {
	l, n := binary.Uvarint(p.b)
	if n <= 0 {
		return Message{}, p.fail(0, "missing or bad length prefix")
	}
	if l != uint64(len(p.b)-n) {
		return Message{}, p.fail(0, "length prefix says %d bytes, %d follow", l, len(p.b)-n)
	}
	p.start = n
	end := len(p.b)

	// Votes and proposals start with their type (field 1, a varint); a
	// vote extension starts with its data (field 1, bytes) or its height.
	var m Message
	first, k := binary.Uvarint(p.b[n:])
	if k > 0 && first == 1<<3|wireVarint {
		typ, k2 := binary.Uvarint(p.b[n+k:])
		if k2 <= 0 {
			return Message{}, p.fail(n+k, "truncated message type")
		}
		switch typ {
		case typePrevote:
			m.Phase = Prevote
		case typePrecommit:
			m.Phase = Precommit
		case typeProposal:
			m.Phase = Proposal
		default:
			return Message{}, p.fail(n+k, "message type 0x%x is not a prevote, precommit or proposal", typ)
		}
	} else {
		if p.f&CometBFT == 0 {
			return Message{}, p.fail(n, "not a tm2 vote or proposal (no type field)")
		}
		m.Phase = VoteExtension
	}

	var sec, nsec int64 // an absent timestamp is the Unix epoch
	var err error
	switch m.Phase {
	case Prevote, Precommit, Proposal:
		// CanonicalProposal is CanonicalVote with pol_round inserted as
		// field 4: the fields after it are one number further on.
		schema, pol := "CanonicalVote", 0
		if m.Phase == Proposal {
			schema, pol = "CanonicalProposal", 1
		}
		err = p.fields(n, end, func(f field) error {
			switch {
			case f.num == 1:
				return p.want(f, wireVarint) // read above
			case f.num == 2:
				m.Height = int64(f.v)
				return p.want(f, wireFixed64)
			case f.num == 3:
				m.Round = int64(f.v)
				return p.want(f, wireFixed64)
			case pol == 1 && f.num == 4:
				m.POLRound = int64(f.v)
				return p.want(f, wireVarint)
			case f.num == 4+pol:
				return p.blockID(f, &m.BlockID)
			case f.num == 5+pol:
				return p.timestamp(f, &sec, &nsec)
			case f.num == 6+pol:
				m.ChainID = string(f.data)
				return p.want(f, wireBytes)
			}
			return p.fail(f.off, "field %d is not in %s", f.num, schema)
		})
	case VoteExtension:
		err = p.fields(n, end, func(f field) error {
			switch f.num {
			case 1:
				m.Extension = bytes.Clone(f.data)
				return p.want(f, wireBytes)
			case 2:
				m.Height = int64(f.v)
				return p.want(f, wireFixed64)
			case 3:
				m.Round = int64(f.v)
				return p.want(f, wireFixed64)
			case 4:
				m.ChainID = string(f.data)
				return p.want(f, wireBytes)
			}
			return p.fail(f.off, "field %d is not in CanonicalVoteExtension", f.num)
		})
	}
	if err != nil {
		return Message{}, err
	}
	if m.Phase != VoteExtension {
		m.Timestamp = time.Unix(sec, nsec).UTC()
	}
	return m, nil
}

func (p *parser) blockID(f field, id *BlockID) error {
	if err := p.want(f, wireBytes); err != nil {
		return err
	}
	return p.fields(f.voff, f.voff+len(f.data), func(g field) error {
		switch g.num {
		case 1:
			id.Hash = bytes.Clone(g.data)
			return p.want(g, wireBytes)
		case 2:
			if err := p.want(g, wireBytes); err != nil {
				return err
			}
			return p.fields(g.voff, g.voff+len(g.data), func(h field) error {
				switch h.num {
				case 1:
					if h.v > math.MaxUint32 {
						return p.fail(h.voff, "part-set total %d does not fit in 32 bits", h.v)
					}
					id.PartSetHeader.Total = uint32(h.v)
					return p.want(h, wireVarint)
				case 2:
					id.PartSetHeader.Hash = bytes.Clone(h.data)
					return p.want(h, wireBytes)
				}
				return p.fail(h.off, "field %d is not in CanonicalPartSetHeader", h.num)
			})
		}
		return p.fail(g.off, "field %d is not in CanonicalBlockID", g.num)
	})
}

func (p *parser) timestamp(f field, sec, nsec *int64) error {
	if err := p.want(f, wireBytes); err != nil {
		return err
	}
	err := p.fields(f.voff, f.voff+len(f.data), func(g field) error {
		switch g.num {
		case 1:
			*sec = int64(g.v)
			return p.want(g, wireVarint)
		case 2:
			if g.v > 999999999 {
				return p.fail(g.voff, "timestamp nanoseconds %d out of range", int64(g.v))
			}
			*nsec = int64(g.v)
			return p.want(g, wireVarint)
		}
		return p.fail(g.off, "field %d is not in Timestamp", g.num)
	})
	if err != nil {
		return err
	}
	if reason := checkTime(*sec, *nsec); reason != "" {
		return p.fail(f.off, "%s", reason)
	}
	return nil
}
