package tm2

import (
	"fmt"
	"sync"
)

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

// Message returns the sign bytes of a message of kind k at height h on
// chainID, with SampleBlockID and SampleTime.
func Message(k Kind, h int64, chainID string) []byte {
	switch k {
	case KindPrevote:
		return Vote{Type: Prevote, Height: h, BlockID: SampleBlockID(), Timestamp: SampleTime, ChainID: chainID}.Bytes()
	case KindPrecommit:
		return Vote{Type: Precommit, Height: h, Round: 1, BlockID: SampleBlockID(), Timestamp: SampleTime, ChainID: chainID}.Bytes()
	case KindProposal:
		return CanonicalProposal{Height: h, Round: 1, POLRound: -1, BlockID: SampleBlockID(), Timestamp: SampleTime, ChainID: chainID}.Bytes()
	case KindNilVote:
		return Vote{Type: Prevote, Height: h, Timestamp: SampleTime, ChainID: chainID}.Bytes()
	}
	panic("tm2: unknown kind " + k.String())
}

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
// would sign them, so that a device enforcing the double-sign rules of
// docs/protocols.md A.6 signs every one. It is safe for concurrent use; the
// device sees rising heights only if calls reach it in the order Next
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
	id := SampleBlockID()
	return [3]Step{
		{KindProposal, h, CanonicalProposal{Height: h, POLRound: -1, BlockID: id, Timestamp: SampleTime, ChainID: s.chainID}.Bytes()},
		{KindPrevote, h, Vote{Type: Prevote, Height: h, BlockID: id, Timestamp: SampleTime, ChainID: s.chainID}.Bytes()},
		{KindPrecommit, h, Vote{Type: Precommit, Height: h, BlockID: id, Timestamp: SampleTime, ChainID: s.chainID}.Bytes()},
	}
}

// OfSize returns a nil prevote at the next height whose chain id is padded
// so that the sign bytes are exactly size bytes, for 34 ≤ size ≤ 128 (the
// longest the validator app's one-byte length prefix allows). Smaller sizes
// get 34 bytes and larger ones 128: callers that need "a valid message of
// about size bytes", such as the conformance suite, use it.
func (s *Heights) OfSize(size int) []byte {
	const base = 28 // a nil prevote with an empty chain id field, plus its key and length
	n := min(max(size, 34), 128) - base
	id := make([]byte, n)
	for i := range id {
		id[i] = "abcdefghijklmnopqrstuvwxyz0123456789"[i%36]
	}
	copy(id, s.chainID)
	return Vote{Type: Prevote, Height: s.next(), Timestamp: SampleTime, ChainID: string(id)}.Bytes()
}
