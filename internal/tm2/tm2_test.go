package tm2

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
)

// The example of docs/protocols.md A.5: prevote H=123456 R=0 on test11.
func TestPrevoteKnownAnswer(t *testing.T) {
	want := "6b" + "0801" + "1140e2010000000000" + "2248" + "0a20" + strings.Repeat("22", 32) +
		"1224" + "0801" + "1220" + strings.Repeat("11", 32) +
		"2a0c" + "08c0abd2cf06" + "10ff93ebdc03" + "3206" + hex.EncodeToString([]byte("test11"))
	got := hex.EncodeToString(Vote{Type: Prevote, Height: 123456, BlockID: SampleBlockID(), Timestamp: SampleTime, ChainID: "test11"}.Bytes())
	if got != want {
		t.Errorf("prevote:\n got %s\nwant %s", got, want)
	}
}

// Sizes from docs/protocols.md A.5 (checked there against gno master).
func TestSizes(t *testing.T) {
	id, ts := SampleBlockID(), SampleTime
	for _, tc := range []struct {
		chain                       string
		prevote, precommit, propose int
	}{
		{"dev", 105, 114, 125},
		{"test11", 108, 117, 128},
		{"staging.gno.land", 118, 127, 139},
		{"test-chain-with-long-id", 125, 135, 146},
	} {
		pv := Vote{Type: Prevote, Height: 9, BlockID: id, Timestamp: ts, ChainID: tc.chain}.Bytes()
		pc := Vote{Type: Precommit, Height: 9, Round: 1, BlockID: id, Timestamp: ts, ChainID: tc.chain}.Bytes()
		pp := CanonicalProposal{Height: 9, Round: 1, POLRound: -1, BlockID: id, Timestamp: ts, ChainID: tc.chain}.Bytes()
		if len(pv) != tc.prevote || len(pc) != tc.precommit || len(pp) != tc.propose {
			t.Errorf("%s: sizes %d/%d/%d, want %d/%d/%d", tc.chain, len(pv), len(pc), len(pp), tc.prevote, tc.precommit, tc.propose)
		}
	}
	for k, want := range map[Kind]int{KindPrevote: 108, KindPrecommit: 117, KindProposal: 128, KindNilVote: 34} {
		if got := len(Message(k, 1<<40, SampleChainID)); got != want {
			t.Errorf("%v: %d bytes, want %d", k, got, want)
		}
		if got, ok := KindOfSize(want); !ok || got != k {
			t.Errorf("KindOfSize(%d) = %v, %v", want, got, ok)
		}
	}
	if _, ok := KindOfSize(100); ok {
		t.Error("KindOfSize(100) found a kind")
	}
}

func TestHeightsRise(t *testing.T) {
	s := NewHeights("", 10)
	a, b := s.Next(KindPrevote), s.Next(KindPrevote)
	if bytes.Equal(a, b) {
		t.Fatal("two messages are identical")
	}
	if a[4] != 10 || b[4] != 11 { // height is fixed64 LE after 1 prefix + 2 type + 1 key bytes
		t.Errorf("heights %d, %d; want 10, 11", a[4], b[4])
	}
	steps := s.NextStep()
	if steps[0].Kind != KindProposal || steps[1].Kind != KindPrevote || steps[2].Kind != KindPrecommit || steps[0].Height != 12 {
		t.Errorf("NextStep: %+v", steps)
	}
	for size := 0; size < 200; size++ {
		got := len(s.OfSize(size))
		if want := min(max(size, 34), 128); got != want {
			t.Errorf("OfSize(%d): %d bytes, want %d", size, got, want)
		}
	}
}
