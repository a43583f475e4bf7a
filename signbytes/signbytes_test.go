package signbytes

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signer"
)

var sampleTime = time.Unix(1777636800, 999999999).UTC()

func sampleID() BlockID {
	return BlockID{Hash: bytes.Repeat([]byte{0x22}, 32), PartSetHeader: PartSetHeader{Total: 1, Hash: bytes.Repeat([]byte{0x11}, 32)}}
}

func mustBytes(t testing.TB, m Message) []byte {
	t.Helper()
	b, err := m.Bytes()
	if err != nil {
		t.Fatalf("%v.Bytes(): %v", m, err)
	}
	return b
}

// referenceMessages are the four messages whose sizes on chain "test11"
// docs/protocols.md A.5 gives (the Ledger validator app's reference
// messages; package signbytestest hands them out).
func referenceMessages(h int64) []struct {
	name string
	m    Message
	size int
} {
	return []struct {
		name string
		m    Message
		size int
	}{
		{"prevote", Message{Phase: Prevote, Height: h, BlockID: sampleID(), Timestamp: sampleTime, ChainID: "test11"}, 108},
		{"precommit", Message{Phase: Precommit, Height: h, Round: 1, BlockID: sampleID(), Timestamp: sampleTime, ChainID: "test11"}, 117},
		{"proposal", Message{Phase: Proposal, Height: h, Round: 1, POLRound: -1, BlockID: sampleID(), Timestamp: sampleTime, ChainID: "test11"}, 128},
		{"nil-vote", Message{Phase: Prevote, Height: h, Timestamp: sampleTime, ChainID: "test11"}, 34},
	}
}

// The reference messages have their reference sizes in the TM2 dialect,
// and parse back, in both dialects, to what they were built from.
func TestReferenceMessages(t *testing.T) {
	for _, r := range referenceMessages(7) {
		w := r.m
		w.Format = TM2
		b := mustBytes(t, w)
		if len(b) != r.size {
			t.Fatalf("%s: %d bytes, want %d", r.name, len(b), r.size)
		}
		m, err := ParseTM2(b)
		if err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		if !reflect.DeepEqual(m, w) {
			t.Errorf("%s: got %+v, want %+v", r.name, m, w)
		}
		w.Format = AnyFormat
		if m, err := Parse(b); err != nil || !reflect.DeepEqual(m, w) {
			t.Errorf("%s: Parse = %+v, %v; want both dialects", r.name, m, err)
		}
		if got := mustBytes(t, w); !bytes.Equal(got, b) {
			t.Errorf("%s: Bytes = %x, want %x", r.name, got, b)
		}
	}
}

// A known-answer vector, written out by hand from the canonical.proto
// field numbers: a prevote at height 1, round 0, nil block, chain "c".
func TestKnownAnswer(t *testing.T) {
	m := Message{Format: AnyFormat, Phase: Prevote, Height: 1, Timestamp: time.Unix(1, 2).UTC(), ChainID: "c"}
	want, _ := hex.DecodeString("14" + "0801" + "110100000000000000" + "2a0408011002" + "3201" + "63")
	if got := mustBytes(t, m); !bytes.Equal(got, want) {
		t.Fatalf("got %x, want %x", got, want)
	}
	got, err := Parse(want)
	if err != nil || !reflect.DeepEqual(got, m) {
		t.Fatalf("Parse = %+v, %v", got, err)
	}
	if got.Step() != 2 || !got.IsVote() || got.String() != `prevote h=1 r=0 chain="c"` {
		t.Fatalf("step %d vote %v string %q", got.Step(), got.IsVote(), got.String())
	}
}

func randomMessage(r *rand.Rand) Message {
	m := Message{
		Phase:   []Phase{Proposal, Prevote, Precommit, VoteExtension}[r.IntN(4)],
		Height:  r.Int64N(1 << 40),
		Round:   r.Int64N(5),
		ChainID: string(bytes.Repeat([]byte{'a' + byte(r.IntN(26))}, r.IntN(60))),
	}
	if r.IntN(10) == 0 {
		m.Height = int64(r.Uint64()) // negative and huge values too
	}
	if m.Phase == VoteExtension {
		m.Format = CometBFT
		m.Extension = make([]byte, r.IntN(300))
		if len(m.Extension) == 0 {
			m.Extension = nil
		}
		for i := range m.Extension {
			m.Extension[i] = byte(r.Uint32())
		}
		return m
	}
	m.Format = []Format{TM2, CometBFT}[r.IntN(2)]
	m.Timestamp = time.Unix(r.Int64N(maxTimeSeconds-minTimeSeconds)+minTimeSeconds, r.Int64N(1e9)).UTC()
	if r.IntN(4) != 0 {
		m.BlockID = BlockID{Hash: make([]byte, 32), PartSetHeader: PartSetHeader{Total: r.Uint32N(10)}}
		if r.IntN(2) == 0 {
			m.BlockID.PartSetHeader.Hash = bytes.Repeat([]byte{7}, 32)
		}
		for i := range m.BlockID.Hash {
			m.BlockID.Hash[i] = byte(r.Uint32())
		}
	}
	if m.Phase == Proposal {
		m.POLRound = r.Int64N(4) - 1
	}
	return m
}

func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		m := randomMessage(r)
		b := mustBytes(t, m)
		got, err := ParseFormat(b, m.Format)
		if err != nil {
			t.Fatalf("%+v: %v (%x)", m, err, b)
		}
		if !reflect.DeepEqual(got, m) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, m)
		}
		all, err := Parse(b)
		if err != nil || all.Format&m.Format == 0 {
			t.Fatalf("Parse: %+v, %v", all, err)
		}
		if m.Phase == VoteExtension {
			continue
		}
		ts := time.Unix(r.Int64N(1<<34), r.Int64N(1e9)).UTC()
		nb, err := m.WithTimestamp(ts)
		if err != nil {
			t.Fatal(err)
		}
		nm, err := ParseFormat(nb, m.Format)
		if err != nil || !nm.Timestamp.Equal(ts) {
			t.Fatalf("WithTimestamp: %+v, %v", nm, err)
		}
		nm.Timestamp = m.Timestamp
		if !reflect.DeepEqual(nm, m) {
			t.Fatalf("WithTimestamp changed more than the time:\n got %+v\nwant %+v", nm, m)
		}
	}
}

// The places where the two dialects differ.
func TestDialectsDiffer(t *testing.T) {
	epoch := Message{Phase: Prevote, Height: 1, Timestamp: time.Unix(0, 0).UTC(), ChainID: "c"}
	noPSH := Message{Phase: Precommit, Height: 1, BlockID: BlockID{Hash: []byte{1}}, Timestamp: sampleTime, ChainID: "c"}
	for _, m := range []Message{epoch, noPSH} {
		m.Format = AnyFormat
		if _, err := m.Bytes(); err == nil {
			t.Errorf("%+v: Bytes with both dialects should refuse", m)
		}
		for _, f := range []Format{TM2, CometBFT} {
			m.Format = f
			b := mustBytes(t, m)
			got, err := Parse(b)
			if err != nil || got.Format != f {
				t.Errorf("%v: Parse = %v, %v; want only %v", f, got.Format, err, f)
			}
			other := AnyFormat &^ f
			if _, err := ParseFormat(b, other); err == nil {
				t.Errorf("%v bytes parsed as %v", f, other)
			}
		}
	}
	// The zero time is 0001-01-01 in both dialects.
	zero := Message{Format: AnyFormat, Phase: Prevote, Height: 1, ChainID: "c"}
	b := mustBytes(t, zero)
	got, err := Parse(b)
	if err != nil || !got.Timestamp.IsZero() || got.Format != AnyFormat {
		t.Fatalf("zero time: %+v, %v", got, err)
	}
}

func TestParseErrors(t *testing.T) {
	good := mustBytes(t, Message{Format: AnyFormat, Phase: Proposal, Height: 5, Round: 1, POLRound: -1, BlockID: sampleID(), Timestamp: sampleTime, ChainID: "test11"})
	body := good[1:]
	sized := func(b []byte) []byte { return append([]byte{byte(len(b))}, b...) }
	cases := map[string][]byte{
		"empty":            nil,
		"short prefix":     good[:len(good)-1],
		"long prefix":      append(bytes.Clone(good), 0),
		"bad prefix":       {0xff},
		"unknown type":     sized([]byte{0x08, 0x03}),
		"vote type 0":      sized([]byte{0x08, 0x00, 0x11, 1, 0, 0, 0, 0, 0, 0, 0}),
		"wrong wire type":  sized([]byte{0x08, 0x01, 0x10, 0x01}),
		"repeated field":   sized([]byte{0x08, 0x01, 0x32, 0x01, 'a', 0x32, 0x01, 'b'}),
		"unknown field":    sized([]byte{0x08, 0x01, 0x3a, 0x01, 'a'}),
		"out of order":     sized([]byte{0x08, 0x01, 0x32, 0x01, 'a', 0x11, 1, 0, 0, 0, 0, 0, 0, 0}),
		"zero written":     sized([]byte{0x08, 0x01, 0x11, 0, 0, 0, 0, 0, 0, 0, 0}),
		"overlong varint":  sized([]byte{0x08, 0x81, 0x00}),
		"bad nanos":        sized([]byte{0x08, 0x01, 0x2a, 0x06, 0x10, 0x80, 0x94, 0xeb, 0xdc, 0x03}),
		"year 10000":       sized([]byte{0x08, 0x01, 0x2a, 0x06, 0x08, 0x80, 0xa0, 0x8c, 0xbe, 0xb1, 0x07}),
		"truncated field":  sized(body[:len(body)-3]),
		"fixed64 cut":      sized([]byte{0x08, 0x01, 0x11, 1, 2}),
		"group wire type":  sized([]byte{0x08, 0x01, 0x13}),
		"field number 0":   sized([]byte{0x08, 0x01, 0x02, 0x00}),
		"psh total > 2^32": sized([]byte{0x08, 0x01, 0x22, 0x09, 0x12, 0x07, 0x08, 0x80, 0x80, 0x80, 0x80, 0x10, 0x00}),
	}
	for name, b := range cases {
		_, err := Parse(b)
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, signer.ErrInvalidMessage) {
			t.Errorf("%s: Parse(%x) = %v, want *Error wrapping ErrInvalidMessage", name, b, err)
		}
	}
	// A vote extension is CometBFT only.
	ext := mustBytes(t, Message{Format: CometBFT, Phase: VoteExtension, Height: 3, Extension: []byte("x"), ChainID: "c"})
	if _, err := ParseTM2(ext); err == nil {
		t.Error("ParseTM2 read a vote extension")
	}
	if _, err := (Message{Format: TM2, Phase: VoteExtension}).Bytes(); err == nil {
		t.Error("Bytes built a tm2 vote extension")
	}
	if _, err := ParseFormat(good, 0); err == nil {
		t.Error("ParseFormat with no format succeeded")
	}
}

func TestBytesRefuses(t *testing.T) {
	for name, m := range map[string]Message{
		"no format":          {Phase: Prevote},
		"unknown phase":      {Format: TM2, Phase: 9},
		"vote with polround": {Format: TM2, Phase: Prevote, POLRound: 1},
		"vote with ext":      {Format: CometBFT, Phase: Precommit, Extension: []byte{1}},
		"ext with time":      {Format: CometBFT, Phase: VoteExtension, Timestamp: sampleTime},
		"time out of range":  {Format: TM2, Phase: Prevote, Timestamp: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		if _, err := m.Bytes(); !errors.Is(err, signer.ErrInvalidMessage) {
			t.Errorf("%s: Bytes = %v", name, err)
		}
	}
	if _, err := (Message{Format: CometBFT, Phase: VoteExtension}).WithTimestamp(sampleTime); err == nil {
		t.Error("WithTimestamp on a vote extension")
	}
}

func TestStrings(t *testing.T) {
	for f, s := range map[Format]string{0: "none", TM2: "tm2", CometBFT: "cometbft", AnyFormat: "tm2|cometbft", 8: "0x8"} {
		if f.String() != s {
			t.Errorf("%d: %q, want %q", f, f.String(), s)
		}
	}
	for p, s := range map[Phase]string{Proposal: "proposal", Prevote: "prevote", Precommit: "precommit", VoteExtension: "vote-extension", 9: "Phase(9)"} {
		if p.String() != s {
			t.Errorf("%d: %q, want %q", p, p.String(), s)
		}
	}
	if VoteExtension.Step() != 0 || Proposal.Step() != 1 || Precommit.Step() != 3 {
		t.Error("steps")
	}
	if !sampleID().Equal(sampleID()) || sampleID().Equal(BlockID{}) || !(BlockID{}).IsZero() {
		t.Error("BlockID.Equal/IsZero")
	}
	_ = math.MaxInt64
}

// An extension is asked with its precommit; every other phase is its own.
func TestPhaseVote(t *testing.T) {
	for p, want := range map[Phase]Phase{
		Proposal: Proposal, Prevote: Prevote,
		Precommit: Precommit, VoteExtension: Precommit,
	} {
		if got := p.Vote(); got != want {
			t.Errorf("%v.Vote() = %v, want %v", p, got, want)
		}
	}
}
