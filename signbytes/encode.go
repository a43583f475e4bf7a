package signbytes

import (
	"encoding/binary"

	"github.com/signerkit/signerkit/internal/pbwire"
)

// encoder writes protobuf wire fields. Scalar fields with zero values are
// left out in both dialects; the dialects differ only in whether an empty
// nested message is written.
type encoder struct {
	b []byte
	f Format // exactly one dialect
}

func (e *encoder) key(field, wire int) { e.b = binary.AppendUvarint(e.b, uint64(field<<3|wire)) }

func (e *encoder) varint(field int, v uint64) {
	if v != 0 {
		e.key(field, wireVarint)
		e.b = binary.AppendUvarint(e.b, v)
	}
}

func (e *encoder) fixed64(field int, v uint64) {
	if v != 0 {
		e.key(field, wireFixed64)
		e.b = binary.LittleEndian.AppendUint64(e.b, v)
	}
}

func (e *encoder) bytes(field int, v []byte) {
	if len(v) != 0 {
		e.key(field, wireBytes)
		e.b = binary.AppendUvarint(e.b, uint64(len(v)))
		e.b = append(e.b, v...)
	}
}

// message writes a nested message. always says that the dialect writes it
// even when it is empty (CometBFT's non-nullable fields); otherwise an
// empty message is left out, as amino does. inner writes the message's
// fields in place (package pbwire).
func (e *encoder) message(field int, always bool, inner func(*encoder)) {
	mark := len(e.b)
	var start int
	e.b, start = pbwire.Begin(e.b, field)
	inner(e)
	if len(e.b) == start && !always {
		e.b = e.b[:mark]
		return
	}
	e.b = pbwire.End(e.b, start)
}

func (e *encoder) blockID(field int, id BlockID) {
	if id.IsZero() {
		// CometBFT's CanonicalizeBlockID makes a zero block id nil; amino
		// leaves the empty struct out.
		return
	}
	e.message(field, false, func(m *encoder) {
		m.bytes(1, id.Hash)
		m.message(2, m.f == CometBFT, func(p *encoder) {
			p.varint(1, uint64(id.PartSetHeader.Total))
			p.bytes(2, id.PartSetHeader.Hash)
		})
	})
}

func (e *encoder) timestamp(field int, sec int64, nsec int32) {
	e.message(field, e.f == CometBFT, func(m *encoder) {
		m.varint(1, uint64(sec))
		m.varint(2, uint64(nsec))
	})
}

// encode returns the sign bytes of m in dialect f (TM2 or CometBFT).
func encode(m Message, f Format) []byte {
	// One byte is kept for the length prefix (pbwire.End).
	e := encoder{b: make([]byte, 1, 160), f: f}
	sec, nsec := m.Timestamp.Unix(), int32(m.Timestamp.Nanosecond())
	switch m.Phase {
	case Prevote, Precommit:
		e.varint(1, m.Phase.msgType())
		e.fixed64(2, uint64(m.Height))
		e.fixed64(3, uint64(m.Round))
		e.blockID(4, m.BlockID)
		e.timestamp(5, sec, nsec)
		e.bytes(6, []byte(m.ChainID))
	case Proposal:
		e.varint(1, typeProposal)
		e.fixed64(2, uint64(m.Height))
		e.fixed64(3, uint64(m.Round))
		e.varint(4, uint64(m.POLRound))
		e.blockID(5, m.BlockID)
		e.timestamp(6, sec, nsec)
		e.bytes(7, []byte(m.ChainID))
	case VoteExtension:
		e.bytes(1, m.Extension)
		e.fixed64(2, uint64(m.Height))
		e.fixed64(3, uint64(m.Round))
		e.bytes(4, []byte(m.ChainID))
	}
	return pbwire.End(e.b, 1)
}
