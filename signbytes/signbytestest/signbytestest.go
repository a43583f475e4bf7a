// Package signbytestest hands out valid tm2 (gno) sign bytes at rising
// heights, for tests and benchmarks of signers that parse what they sign
// and refuse anything out of order (the Ledger validator app, a
// double-sign guard). The bytes are built by package signbytes in its TM2
// dialect; this package only chooses the content.
//
// With chain id "test11", 32-byte hashes, one part and a 2026 timestamp
// the sizes are those of docs/protocols.md A.5: prevote (round 0) 108
// bytes, precommit (round 1) 117, proposal (round 1, POLRound −1) 128,
// and a nil prevote (no block id, round 0) 34.
package signbytestest

import (
	"bytes"
	"fmt"
	"sync"
	"time"

	"github.com/signerkit/signerkit/signbytes"
)

// SampleBlockID is the block id of docs/protocols.md A.5's example: hash
// 0x22×32, one part, part-set hash 0x11×32.
func SampleBlockID() signbytes.BlockID {
	return signbytes.BlockID{Hash: bytes.Repeat([]byte{0x22}, 32),
		PartSetHeader: signbytes.PartSetHeader{Total: 1, Hash: bytes.Repeat([]byte{0x11}, 32)}}
}

// SampleTime is the timestamp of docs/protocols.md A.5's example,
// 2026-05-01T12:00:00.999999999Z, whose seconds and nanoseconds both take
// five varint bytes.
var SampleTime = time.Unix(1777636800, 999999999).UTC()

// SampleChainID is the chain id the reference sizes are given for.
const SampleChainID = "test11"

// Bytes returns m's sign bytes in the TM2 dialect. It panics if m cannot
// be encoded, which for the messages of a test is a bug in the test.
func Bytes(m signbytes.Message) []byte {
	m.Format = signbytes.TM2
	b, err := m.Bytes()
	if err != nil {
		panic("signbytestest: " + err.Error())
	}
	return b
}

// Kind is one of the messages a validator signs, with the shape the
// reference sizes of docs/protocols.md A.5 are given for.
type Kind uint8

// The kinds of message, with their size on chain "test11".
const (
	KindPrevote   Kind = iota + 1 // prevote for a block, round 0: 108 B
	KindPrecommit                 // precommit for a block, round 1: 117 B
	KindProposal                  // proposal, round 1, POLRound −1: 128 B
	KindNilVote                   // prevote for nil, round 0: 34 B
)

// String returns the kind's name.
func (k Kind) String() string {
	switch k {
	case KindPrevote:
		return "prevote"
	case KindPrecommit:
		return "precommit"
	case KindProposal:
		return "proposal"
	case KindNilVote:
		return "nil-vote"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Kinds lists every kind.
func Kinds() []Kind { return []Kind{KindPrevote, KindPrecommit, KindProposal, KindNilVote} }

// MessageOf returns the message of kind k at height h on chainID, with
// SampleBlockID and SampleTime.
func MessageOf(k Kind, h int64, chainID string) signbytes.Message {
	m := signbytes.Message{Format: signbytes.TM2, Height: h, BlockID: SampleBlockID(), Timestamp: SampleTime, ChainID: chainID}
	switch k {
	case KindPrevote:
		m.Phase = signbytes.Prevote
	case KindPrecommit:
		m.Phase, m.Round = signbytes.Precommit, 1
	case KindProposal:
		m.Phase, m.Round, m.POLRound = signbytes.Proposal, 1, -1
	case KindNilVote:
		m.Phase, m.BlockID = signbytes.Prevote, signbytes.BlockID{}
	default:
		panic("signbytestest: unknown kind " + k.String())
	}
	return m
}

// Message returns the sign bytes of MessageOf(k, h, chainID).
func Message(k Kind, h int64, chainID string) []byte { return Bytes(MessageOf(k, h, chainID)) }

// KindOfSize returns the kind whose "test11" sign bytes are size bytes
// long, or false.
func KindOfSize(size int) (Kind, bool) {
	for _, k := range Kinds() {
		if len(Message(k, 1, SampleChainID)) == size {
			return k, true
		}
	}
	return 0, false
}

// Heights hands out sign bytes at strictly rising heights, as a validator
// would sign them, so that a signer enforcing the double-sign rules of
// docs/protocols.md A.6 signs every one. It is safe for concurrent use;
// the signer sees rising heights only if calls reach it in the order Next
// returned them.
type Heights struct {
	mu      sync.Mutex
	chainID string
	height  int64
}

// NewHeights returns a source whose first message is at height start on
// chainID ("" means SampleChainID).
func NewHeights(chainID string, start int64) *Heights {
	if chainID == "" {
		chainID = SampleChainID
	}
	return &Heights{chainID: chainID, height: start - 1}
}

func (s *Heights) next() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.height++
	return s.height
}

// Next returns a message of kind k at the next height.
func (s *Heights) Next(k Kind) []byte { return Message(k, s.next(), s.chainID) }

// Step is one message of a consensus round.
type Step struct {
	Kind   Kind
	Height int64
	Bytes  []byte
}

// NextStep returns the messages of one height in the order a proposer
// signs them: proposal, prevote, precommit, all at round 0 so the
// double-sign rules accept each after the one before (a proposal at round
// 0 is 119 bytes on "test11"; a prevote and a precommit 108).
func (s *Heights) NextStep() [3]Step {
	h := s.next()
	m := signbytes.Message{Height: h, BlockID: SampleBlockID(), Timestamp: SampleTime, ChainID: s.chainID}
	var steps [3]Step
	for i, k := range []Kind{KindProposal, KindPrevote, KindPrecommit} {
		m.Phase, m.POLRound = signbytes.Prevote, 0
		switch k {
		case KindProposal:
			m.Phase, m.POLRound = signbytes.Proposal, -1
		case KindPrecommit:
			m.Phase = signbytes.Precommit
		}
		steps[i] = Step{k, h, Bytes(m)}
	}
	return steps
}

// OfSize returns a nil prevote at the next height whose chain id is padded
// so that the sign bytes are exactly size bytes, for 34 ≤ size ≤ 128 (the
// longest the Ledger validator app's one-byte length prefix allows).
// Smaller sizes get 34 bytes and larger ones 128: callers that need "a
// valid message of about size bytes", such as the conformance suite, use
// it.
func (s *Heights) OfSize(size int) []byte {
	const base = 28 // a nil prevote with an empty chain id field, plus its key and length
	n := min(max(size, 34), 128) - base
	id := make([]byte, n)
	for i := range id {
		id[i] = "abcdefghijklmnopqrstuvwxyz0123456789"[i%36]
	}
	copy(id, s.chainID)
	return Bytes(signbytes.Message{Phase: signbytes.Prevote, Height: s.next(), Timestamp: SampleTime, ChainID: string(id)})
}
