// Package tm2 builds the sign bytes a gno (tm2) validator hands its signer:
// uvarint-length-prefixed CanonicalVote and CanonicalProposal, encoded the
// way amino.MarshalSized does (docs/protocols.md A.5). The builder exists so that
// tests and benchmarks of the Ledger validator app, which parses what it
// signs and refuses anything out of order, have real messages at rising
// heights; it is not a general amino encoder.
//
// With chain id "test11", 32-byte hashes, one part and a 2026 timestamp the
// sizes are those of docs/protocols.md A.5: prevote (round 0) 108 bytes,
// precommit (round 1) 117, proposal (round 1, POLRound −1) 128, and a nil
// prevote (no block id, round 0) 34.
package tm2

import (
	"bytes"
	"encoding/binary"
	"time"
)

// Type is the SignedMsgType of a vote or proposal.
type Type byte

// The message types the validator app signs.
const (
	Prevote   Type = 0x01
	Precommit Type = 0x02
	Proposal  Type = 0x20
)

// BlockID names a block: its hash and its part-set header. The zero
// BlockID is a nil vote's, and is left out of the encoding.
type BlockID struct {
	Hash       []byte
	PartsTotal int64
	PartsHash  []byte
}

// IsZero reports whether b is the nil block id.
func (b BlockID) IsZero() bool {
	return len(b.Hash) == 0 && b.PartsTotal == 0 && len(b.PartsHash) == 0
}

// SampleBlockID is the block id of docs/protocols.md A.5's example: hash 0x22×32,
// one part, part-set hash 0x11×32.
func SampleBlockID() BlockID {
	return BlockID{Hash: bytes.Repeat([]byte{0x22}, 32), PartsTotal: 1, PartsHash: bytes.Repeat([]byte{0x11}, 32)}
}

// SampleTime is the timestamp of docs/protocols.md A.5's example,
// 2026-05-01T12:00:00.999999999Z, whose seconds and nanoseconds both take
// five varint bytes.
var SampleTime = time.Unix(1777636800, 999999999).UTC()

// SampleChainID is the chain id the reference sizes are given for.
const SampleChainID = "test11"

// Vote is a CanonicalVote.
type Vote struct {
	Type      Type // Prevote or Precommit
	Height    int64
	Round     int64
	BlockID   BlockID // zero for a nil vote
	Timestamp time.Time
	ChainID   string
}

// Bytes returns the vote's sign bytes: uvarint(length) followed by the
// amino encoding of the CanonicalVote (fields with zero values left out).
func (v Vote) Bytes() []byte {
	var e encoder
	e.varintField(1, uint64(v.Type))
	e.fixed64Field(2, uint64(v.Height))
	e.fixed64Field(3, uint64(v.Round))
	e.blockIDField(4, v.BlockID)
	e.timeField(5, v.Timestamp)
	e.stringField(6, v.ChainID)
	return e.sized()
}

// CanonicalProposal is a proposal's sign bytes source. (It is not named
// Proposal, which is the Type constant.)
type CanonicalProposal struct {
	Height    int64
	Round     int64
	POLRound  int64 // −1 when there is no proof-of-lock round
	BlockID   BlockID
	Timestamp time.Time
	ChainID   string
}

// Bytes returns the proposal's sign bytes. POLRound is a plain varint
// (key 0x20), as in gno since commit d8a351e7; −1 takes ten bytes.
func (p CanonicalProposal) Bytes() []byte {
	var e encoder
	e.varintField(1, uint64(Proposal))
	e.fixed64Field(2, uint64(p.Height))
	e.fixed64Field(3, uint64(p.Round))
	e.varintField(4, uint64(p.POLRound))
	e.blockIDField(5, p.BlockID)
	e.timeField(6, p.Timestamp)
	e.stringField(7, p.ChainID)
	return e.sized()
}

// encoder writes protobuf-style fields, leaving zero values out.
type encoder struct{ b []byte }

func (e *encoder) key(field, wire int) { e.b = binary.AppendUvarint(e.b, uint64(field<<3|wire)) }

func (e *encoder) varintField(field int, v uint64) {
	if v != 0 {
		e.key(field, 0)
		e.b = binary.AppendUvarint(e.b, v)
	}
}

func (e *encoder) fixed64Field(field int, v uint64) {
	if v != 0 {
		e.key(field, 1)
		e.b = binary.LittleEndian.AppendUint64(e.b, v)
	}
}

func (e *encoder) bytesField(field int, v []byte) {
	if len(v) != 0 {
		e.key(field, 2)
		e.b = binary.AppendUvarint(e.b, uint64(len(v)))
		e.b = append(e.b, v...)
	}
}

func (e *encoder) stringField(field int, v string) { e.bytesField(field, []byte(v)) }

func (e *encoder) message(field int, inner func(*encoder)) {
	var m encoder
	inner(&m)
	e.bytesField(field, m.b)
}

func (e *encoder) blockIDField(field int, id BlockID) {
	if id.IsZero() {
		return
	}
	e.message(field, func(m *encoder) {
		m.bytesField(1, id.Hash)
		m.message(2, func(p *encoder) {
			p.varintField(1, uint64(id.PartsTotal))
			p.bytesField(2, id.PartsHash)
		})
	})
}

func (e *encoder) timeField(field int, t time.Time) {
	if t.IsZero() {
		return
	}
	e.message(field, func(m *encoder) {
		m.varintField(1, uint64(t.Unix()))
		m.varintField(2, uint64(t.Nanosecond()))
	})
}

func (e *encoder) sized() []byte {
	out := binary.AppendUvarint(make([]byte, 0, len(e.b)+2), uint64(len(e.b)))
	return append(out, e.b...)
}
