package ledgersim

import (
	"encoding/binary"

	"github.com/signerkit/signerkit/ledger"
)

// The message types the validator app accepts (docs/protocols.md A.5).
const (
	TypePrevote   = 0x01
	TypePrecommit = 0x02
	TypeProposal  = 0x20
)

// Vote is what the validator app reads from sign bytes: the type, height
// and round that its double-sign rules compare. Everything after field 3
// (block id, timestamp, chain id) it ignores.
type Vote struct {
	Type   byte
	Height int64
	Round  int8
}

// maxParsedSize is the size above which the parser refuses a buffer that
// reached the fields it ignores (vote_parser.c).
const maxParsedSize = 10000

// ParseSignBytes parses sign bytes as the validator app v0.9.1 does
// (app-tendermint src/lib/vote_parser.c, docs/protocols.md A.5) and returns the
// vote or the app's parse-error code. With strictPrefix, the length
// prefix must be one byte (L + 1 == len(b)), so sign bytes of 129 bytes or
// more are refused with code 7, as the upstream app does; without it any
// uvarint prefix that matches the length is accepted.
func ParseSignBytes(b []byte, strictPrefix bool) (Vote, ledger.ParseError) {
	var v Vote
	if len(b) < 2 {
		return v, ledger.ParseUnexpectedBufferEnd
	}
	// The app's get_varint wants at least one byte after the prefix.
	l, n := binary.Uvarint(b)
	if n <= 0 || n >= len(b) {
		return v, ledger.ParseUnexpectedBufferEnd
	}
	if strictPrefix {
		if l+1 != uint64(len(b)) {
			return v, ledger.ParseUnexpectedBufferSize
		}
	} else if l+uint64(n) != uint64(len(b)) {
		return v, ledger.ParseUnexpectedBufferSize
	}
	var height, round uint64
	p := b[n:]
fields:
	for len(p) > 0 {
		key := p[0]
		p = p[1:]
		field, wire := key>>3, key&7
		switch field {
		case 0:
			return v, ledger.ParseUnexpectedField
		case 1:
			if wire != 0 {
				return v, ledger.ParseUnexpectedWireType
			}
			if len(p) < 1 {
				return v, ledger.ParseUnexpectedBufferEnd
			}
			v.Type, p = p[0], p[1:]
		case 2, 3:
			if wire != 1 {
				return v, ledger.ParseUnexpectedWireType
			}
			if len(p) < 8 {
				return v, ledger.ParseUnexpectedBufferEnd
			}
			x := binary.LittleEndian.Uint64(p)
			p = p[8:]
			if field == 2 {
				height = x
			} else {
				if x > 255 {
					return v, ledger.ParseUnexpectedRound
				}
				round = x
			}
		default:
			if len(b) > maxParsedSize {
				return v, ledger.ParseUnexpectedBufferSize
			}
			break fields
		}
	}
	switch v.Type {
	case TypePrevote, TypePrecommit, TypeProposal:
	default:
		return v, ledger.ParseUnexpectedType
	}
	if int64(height) < 0 {
		return v, ledger.ParseUnexpectedHeight
	}
	v.Height = int64(height)
	v.Round = int8(round)
	if v.Round < 0 { // the app keeps the round in an int8 (sic)
		return v, ledger.ParseUnexpectedHeight
	}
	return v, 0
}

// fsm is the app's double-sign state (docs/protocols.md A.6), kept in RAM and
// lost when the app restarts.
type fsm struct {
	initialized bool
	last        Vote
}

// accepts reports whether the app signs v after s.last.
func (s *fsm) accepts(v Vote) bool {
	if !s.initialized {
		return false
	}
	l := s.last
	switch {
	case v.Height > l.Height:
		return true
	case v.Height < l.Height:
		return false
	case v.Round > l.Round:
		return true
	case v.Round < l.Round:
		return false
	case v.Type == TypePrevote && l.Type == TypeProposal:
		return true
	case v.Type == TypePrecommit && l.Type != TypePrecommit:
		return true
	}
	return false
}
