package ledgersim_test

import (
	"encoding/binary"
	"testing"

	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/ledger/ledgersim"
	"github.com/signerkit/signerkit/signbytes/signbytestest"
)

// sized prefixes body with its one-byte length.
func sized(body ...byte) []byte { return append([]byte{byte(len(body))}, body...) }

func fixed(key byte, v uint64) []byte {
	return binary.LittleEndian.AppendUint64([]byte{key}, v)
}

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// The parser's rules and codes, step by step (docs/protocols.md A.5).
func TestParseSignBytes(t *testing.T) {
	typ := []byte{0x08, 0x01}
	for _, tc := range []struct {
		name string
		b    []byte
		want ledger.ParseError
		vote ledgersim.Vote
	}{
		{"prevote", signbytestest.Message(signbytestest.KindPrevote, 77, "test11"), 0, ledgersim.Vote{Type: 1, Height: 77}},
		{"precommit r1", signbytestest.Message(signbytestest.KindPrecommit, 78, "test11"), 0, ledgersim.Vote{Type: 2, Height: 78, Round: 1}},
		{"proposal r1", signbytestest.Message(signbytestest.KindProposal, 79, "test11"), 0, ledgersim.Vote{Type: 0x20, Height: 79, Round: 1}},
		{"nil vote", signbytestest.Message(signbytestest.KindNilVote, 80, "test11"), 0, ledgersim.Vote{Type: 1, Height: 80}},
		{"round 127", sized(cat(typ, fixed(0x11, 5), fixed(0x19, 127))...), 0, ledgersim.Vote{Type: 1, Height: 5, Round: 127}},
		{"one byte", []byte{0x01}, ledger.ParseUnexpectedBufferEnd, ledgersim.Vote{}},
		{"prefix runs off", []byte{0x80, 0x80}, ledger.ParseUnexpectedBufferEnd, ledgersim.Vote{}},
		// get_varint wants a byte after the prefix: code 1, before the size check.
		{"prefix and nothing after", []byte{0x80, 0x01}, ledger.ParseUnexpectedBufferEnd, ledgersim.Vote{}},
		{"prefix does not match", []byte{0x05, 0x08, 0x01}, ledger.ParseUnexpectedBufferSize, ledgersim.Vote{}},
		{"two-byte prefix", signbytestest.Message(signbytestest.KindProposal, 1, "staging.gno.land"), ledger.ParseUnexpectedBufferSize, ledgersim.Vote{}},
		{"field 0", sized(0x00, 0x01), ledger.ParseUnexpectedField, ledgersim.Vote{}},
		{"type as fixed64", sized(cat([]byte{0x09}, make([]byte, 8))...), ledger.ParseUnexpectedWireType, ledgersim.Vote{}},
		{"height as varint", sized(0x08, 0x01, 0x10, 0x05), ledger.ParseUnexpectedWireType, ledgersim.Vote{}},
		{"type truncated", sized(0x08), ledger.ParseUnexpectedBufferEnd, ledgersim.Vote{}},
		{"height truncated", sized(0x08, 0x01, 0x11, 0x01, 0x02), ledger.ParseUnexpectedBufferEnd, ledgersim.Vote{}},
		{"round 256", sized(cat(typ, fixed(0x11, 5), fixed(0x19, 256))...), ledger.ParseUnexpectedRound, ledgersim.Vote{}},
		{"round 200 (int8)", sized(cat(typ, fixed(0x11, 5), fixed(0x19, 200))...), ledger.ParseUnexpectedHeight, ledgersim.Vote{}},
		{"type 3", sized(0x08, 0x03), ledger.ParseUnexpectedType, ledgersim.Vote{}},
		{"no type", sized(fixed(0x11, 5)...), ledger.ParseUnexpectedType, ledgersim.Vote{}},
		{"negative height", sized(cat(typ, fixed(0x11, 1<<63))...), ledger.ParseUnexpectedHeight, ledgersim.Vote{}},
	} {
		v, perr := ledgersim.ParseSignBytes(tc.b, true)
		if perr != tc.want || (perr == 0 && v != tc.vote) {
			t.Errorf("%s: got %+v, code %d; want %+v, code %d", tc.name, v, perr, tc.vote, tc.want)
		}
	}
	if _, perr := ledgersim.ParseSignBytes([]byte{0x80, 0x01}, false); perr != ledger.ParseUnexpectedBufferEnd {
		t.Errorf("prefix and nothing after, long prefix allowed: code %d, want 1", perr)
	}
	// Without the one-byte rule, a 139-byte proposal parses.
	if v, perr := ledgersim.ParseSignBytes(signbytestest.Message(signbytestest.KindProposal, 9, "staging.gno.land"), false); perr != 0 || v.Height != 9 {
		t.Errorf("long prefix allowed: %+v, %d", v, perr)
	}
}

// FuzzParseSignBytes: the parser never panics, and what it accepts has a
// valid type, a non-negative height and round and a length prefix that
// matches.
func FuzzParseSignBytes(f *testing.F) {
	for _, k := range signbytestest.Kinds() {
		m := signbytestest.Message(k, 123456, "test11")
		f.Add(m, true)
		f.Add(m[:len(m)/2], true)
	}
	f.Add(signbytestest.Message(signbytestest.KindProposal, 1, "test-chain-with-long-id"), false)
	f.Add([]byte{0x02, 0x00, 0x00}, true)
	f.Add([]byte{0x0a, 0x08, 0x01, 0x19, 0xff, 0, 0, 0, 0, 0, 0}, true)
	f.Fuzz(func(t *testing.T, b []byte, strict bool) {
		v, perr := ledgersim.ParseSignBytes(b, strict)
		if perr != 0 {
			if perr < 1 || perr > 7 {
				t.Fatalf("code %d outside 1-7", perr)
			}
			return
		}
		if v.Type != ledgersim.TypePrevote && v.Type != ledgersim.TypePrecommit && v.Type != ledgersim.TypeProposal {
			t.Fatalf("accepted type 0x%02x", v.Type)
		}
		if v.Height < 0 || v.Round < 0 {
			t.Fatalf("accepted %+v", v)
		}
		// The app's rule is L + 1 == size whatever the prefix's own length
		// (so a two-byte prefix one short of its length passes, as on the
		// device); without it, L + len(prefix) == size.
		l, n := binary.Uvarint(b)
		if n <= 0 || (strict && l+1 != uint64(len(b))) || (!strict && l+uint64(n) != uint64(len(b))) {
			t.Fatalf("accepted a prefix %d (%d bytes) for %d bytes", l, n, len(b))
		}
	})
}
