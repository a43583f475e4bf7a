// Package tm2 forwards to package signbytes/signbytestest, for the Ledger
// tests that still import it while the Ledger simulator moves (issue 25,
// part 3). It has no encoder of its own: Vote and CanonicalProposal build
// their bytes with package signbytes.
//
// Deprecated: use signbytes/signbytestest, or signbytes.Message. This
// package goes once the ledger/ and cmd/ledgersim tests have moved.
package tm2

import (
	"time"

	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signbytes/signbytestest"
)

// Names from signbytestest.
type (
	Kind    = signbytestest.Kind
	Heights = signbytestest.Heights
	Step    = signbytestest.Step
)

// The kinds, as in signbytestest.
const (
	KindPrevote   = signbytestest.KindPrevote
	KindPrecommit = signbytestest.KindPrecommit
	KindProposal  = signbytestest.KindProposal
	KindNilVote   = signbytestest.KindNilVote
	SampleChainID = signbytestest.SampleChainID
)

// SampleTime is signbytestest.SampleTime.
var SampleTime = signbytestest.SampleTime

// Functions from signbytestest.
var (
	Kinds      = signbytestest.Kinds
	Message    = signbytestest.Message
	KindOfSize = signbytestest.KindOfSize
	NewHeights = signbytestest.NewHeights
)

// Type is the SignedMsgType of a vote or proposal.
type Type byte

// The message types.
const (
	Prevote   Type = 0x01
	Precommit Type = 0x02
	Proposal  Type = 0x20
)

// BlockID names a block: its hash and its part-set header. The zero
// BlockID is a nil vote's.
type BlockID struct {
	Hash       []byte
	PartsTotal int64
	PartsHash  []byte
}

// SampleBlockID is signbytestest.SampleBlockID.
func SampleBlockID() BlockID {
	id := signbytestest.SampleBlockID()
	return BlockID{Hash: id.Hash, PartsTotal: int64(id.PartSetHeader.Total), PartsHash: id.PartSetHeader.Hash}
}

func (b BlockID) signbytes() signbytes.BlockID {
	return signbytes.BlockID{Hash: b.Hash, PartSetHeader: signbytes.PartSetHeader{Total: uint32(b.PartsTotal), Hash: b.PartsHash}}
}

// Vote is a CanonicalVote.
type Vote struct {
	Type      Type // Prevote or Precommit
	Height    int64
	Round     int64
	BlockID   BlockID // zero for a nil vote
	Timestamp time.Time
	ChainID   string
}

// Bytes returns the vote's sign bytes (signbytestest.Bytes).
func (v Vote) Bytes() []byte {
	phase := signbytes.Prevote
	if v.Type == Precommit {
		phase = signbytes.Precommit
	}
	return signbytestest.Bytes(signbytes.Message{Phase: phase, Height: v.Height, Round: v.Round,
		BlockID: v.BlockID.signbytes(), Timestamp: v.Timestamp, ChainID: v.ChainID})
}

// CanonicalProposal is a proposal's sign bytes source.
type CanonicalProposal struct {
	Height    int64
	Round     int64
	POLRound  int64 // −1 when there is no proof-of-lock round
	BlockID   BlockID
	Timestamp time.Time
	ChainID   string
}

// Bytes returns the proposal's sign bytes (signbytestest.Bytes).
func (p CanonicalProposal) Bytes() []byte {
	return signbytestest.Bytes(signbytes.Message{Phase: signbytes.Proposal, Height: p.Height, Round: p.Round,
		POLRound: p.POLRound, BlockID: p.BlockID.signbytes(), Timestamp: p.Timestamp, ChainID: p.ChainID})
}
