package signbytes

import (
	"bytes"
	"fmt"
	"strings"
	"time"
)

// Format is a set of sign-bytes dialects. Parse reports the dialects in
// which the bytes it read are canonical, which for almost every real vote
// or proposal is both (see the package documentation).
type Format uint8

// The dialects.
const (
	// TM2 is the amino encoding of gno's tm2 (gno v1.7.1,
	// tm2/pkg/bft/types): empty nested messages are left out.
	TM2 Format = 1 << iota
	// CometBFT is the protobuf encoding of CometBFT v0.34 and v0.38 (and
	// Tendermint v0.34): the timestamp and a block id's part-set header are
	// always written, even when empty. Only CometBFT has vote extensions.
	CometBFT

	// AnyFormat is every dialect.
	AnyFormat = TM2 | CometBFT
)

// String returns "tm2", "cometbft", "tm2|cometbft" or "none".
func (f Format) String() string {
	var parts []string
	if f&TM2 != 0 {
		parts = append(parts, "tm2")
	}
	if f&CometBFT != 0 {
		parts = append(parts, "cometbft")
	}
	if f&^AnyFormat != 0 {
		parts = append(parts, fmt.Sprintf("0x%x", uint8(f&^AnyFormat)))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "|")
}

// Phase is the consensus step a message belongs to. Its value for a
// proposal, prevote and precommit is the step number CometBFT's FilePV and
// tm2's FileState keep in their double-sign state (1, 2, 3).
type Phase uint8

// The phases.
const (
	Proposal  Phase = 1
	Prevote   Phase = 2
	Precommit Phase = 3
	// VoteExtension is CometBFT v0.38's CanonicalVoteExtension, signed with
	// each precommit for a block. It has no step of its own, no block id
	// and no timestamp.
	VoteExtension Phase = 4
)

// String returns the phase's name in lower case.
func (p Phase) String() string {
	switch p {
	case Proposal:
		return "proposal"
	case Prevote:
		return "prevote"
	case Precommit:
		return "precommit"
	case VoteExtension:
		return "vote-extension"
	}
	return fmt.Sprintf("Phase(%d)", uint8(p))
}

// Step returns the step number of p in the double-sign state: 1 for a
// proposal, 2 for a prevote, 3 for a precommit, and 0 for a vote extension
// or an unknown phase.
func (p Phase) Step() int8 {
	if p >= Proposal && p <= Precommit {
		return int8(p)
	}
	return 0
}

// Vote returns the phase of the vote p is asked with: a vote extension's
// is Precommit, since a node asks for both in one request; every other
// phase is its own. Metrics and logs file an extension under it.
func (p Phase) Vote() Phase {
	if p == VoteExtension {
		return Precommit
	}
	return p
}

// msgType returns the SignedMsgType byte of the canonical message.
func (p Phase) msgType() uint64 {
	switch p {
	case Prevote:
		return typePrevote
	case Precommit:
		return typePrecommit
	case Proposal:
		return typeProposal
	}
	return 0
}

// The SignedMsgType values on the wire.
const (
	typePrevote   = 0x01
	typePrecommit = 0x02
	typeProposal  = 0x20
)

// PartSetHeader is the part-set header of a block id.
type PartSetHeader struct {
	Total uint32
	Hash  []byte
}

// IsZero reports whether h has no parts and no hash.
func (h PartSetHeader) IsZero() bool { return h.Total == 0 && len(h.Hash) == 0 }

// BlockID names a block by its hash and part-set header. The zero BlockID
// is the nil block: a vote for nil carries no block id at all.
type BlockID struct {
	Hash          []byte
	PartSetHeader PartSetHeader
}

// IsZero reports whether b is the nil block id.
func (b BlockID) IsZero() bool { return len(b.Hash) == 0 && b.PartSetHeader.IsZero() }

// Equal reports whether b and o name the same block.
func (b BlockID) Equal(o BlockID) bool {
	return bytes.Equal(b.Hash, o.Hash) && b.PartSetHeader.Total == o.PartSetHeader.Total &&
		bytes.Equal(b.PartSetHeader.Hash, o.PartSetHeader.Hash)
}

// Message is a canonical vote, proposal or vote extension: the content of
// sign bytes. Parse fills it in; a caller may also fill one in and call
// Bytes to build sign bytes.
//
// Height and Round are int64 on the wire in every dialect (CometBFT's
// Round is an int32 widened by the node). Fields that do not belong to the
// Phase are zero: POLRound is a proposal's, Extension a vote extension's,
// and a vote extension has no BlockID or Timestamp.
type Message struct {
	// Format is the set of dialects the message is (or is to be) encoded
	// in. Bytes needs one dialect, or both when they agree.
	Format Format

	Phase  Phase
	Height int64
	Round  int64
	// POLRound is a proposal's proof-of-lock round, −1 when there is none.
	POLRound int64
	// BlockID is the zero BlockID for a vote for nil.
	BlockID BlockID
	// Timestamp is the time the node put in the vote or proposal, in UTC
	// as Parse returns it. The zero time.Time is encoded as 0001-01-01, as
	// both gno and CometBFT encode it.
	Timestamp time.Time
	ChainID   string
	// Extension is the application data of a vote extension.
	Extension []byte
}

// Step returns m.Phase.Step().
func (m Message) Step() int8 { return m.Phase.Step() }

// IsVote reports whether m is a prevote or a precommit.
func (m Message) IsVote() bool { return m.Phase == Prevote || m.Phase == Precommit }

// String returns a short description such as `prevote h=5 r=0 chain="test11"`.
func (m Message) String() string {
	return fmt.Sprintf("%s h=%d r=%d chain=%q", m.Phase, m.Height, m.Round, m.ChainID)
}

// Bytes returns m's sign bytes: the uvarint length followed by the
// canonical message. When m.Format holds both dialects and they would
// encode m differently (only for a Unix-epoch timestamp, which TM2 leaves
// out, or a block id with a hash and an empty part-set header, whose empty
// header CometBFT writes), Bytes returns an error: name one dialect.
func (m Message) Bytes() ([]byte, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	switch m.Format {
	case TM2, CometBFT:
		return encode(m, m.Format), nil
	case AnyFormat:
		a, b := encode(m, TM2), encode(m, CometBFT)
		if !bytes.Equal(a, b) {
			return nil, &Error{Format: m.Format, Offset: -1, Reason: "the tm2 and cometbft encodings differ for this message; choose one Format"}
		}
		return a, nil
	}
	return nil, &Error{Format: m.Format, Offset: -1, Reason: "no sign-bytes dialect selected"}
}

// WithTimestamp returns the sign bytes of m with its timestamp replaced by
// t, in m's dialect. This is how a caller rebuilds a vote or proposal that
// a double-sign guard answered with an earlier signature and timestamp.
// It returns an error for a vote extension, which has no timestamp.
func (m Message) WithTimestamp(t time.Time) ([]byte, error) {
	if m.Phase == VoteExtension {
		return nil, &Error{Format: m.Format, Offset: -1, Reason: "a vote extension has no timestamp"}
	}
	m.Timestamp = t
	return m.Bytes()
}

// check refuses messages no dialect can encode.
func (m Message) check() error {
	bad := func(reason string) error { return &Error{Format: m.Format, Offset: -1, Reason: reason} }
	switch m.Phase {
	case Proposal, Prevote, Precommit:
		if len(m.Extension) != 0 {
			return bad("only a vote extension carries extension data")
		}
		if m.Phase != Proposal && m.POLRound != 0 {
			return bad("only a proposal carries a POL round")
		}
		if err := checkTime(m.Timestamp.Unix(), int64(m.Timestamp.Nanosecond())); err != "" {
			return bad(err)
		}
	case VoteExtension:
		if m.Format&TM2 != 0 {
			return bad("tm2 has no vote extensions")
		}
		if !m.BlockID.IsZero() || !m.Timestamp.IsZero() || m.POLRound != 0 {
			return bad("a vote extension carries no block id, timestamp or POL round")
		}
	default:
		return bad(fmt.Sprintf("unknown phase %d", m.Phase))
	}
	return nil
}

// The range of timestamps both dialects accept: 0001-01-01T00:00:00Z to
// 9999-12-31T23:59:59.999999999Z.
const (
	minTimeSeconds = -62135596800
	maxTimeSeconds = 253402300800
)

func checkTime(sec, nsec int64) string {
	if sec < minTimeSeconds || sec >= maxTimeSeconds {
		return "timestamp out of range (year 1 to 9999)"
	}
	if nsec < 0 || nsec > 999999999 {
		return "timestamp nanoseconds out of range"
	}
	return ""
}
